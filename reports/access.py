"""Who reads which report: one home for the rule, asked by the API, the report pages and the home page.

- A campaign's report: staff, researchers, and those who read that campaign's labels and gold (its managers,
  viewers and experts; not a gold panel's voting experts); none but staff where they label on the benchmark:
  annotation.policy.CampaignAccess.reads_gold.
- A benchmark-wide report: staff and researchers (benchmarks.permissions.reads_all_gold), not a researcher who
  labels on the benchmark (readable_benchmark_reports), without the names and per-person figures of the annotators of
  campaigns they cannot read.
"""
from django.utils import translation
from django.utils.translation import gettext

from annotation import policy
from annotation.models import Campaign
from benchmarks.models import Benchmark
from benchmarks.permissions import gold_benchmarks, reads_all_gold
from core.errors import ActionError, Code

from . import store
from .contract import ReportOptions
from .render import render


def check_report_access(user, benchmark_slug, campaign_id=None):
    """Nothing when `user` may read the report; ActionError otherwise (404 for a campaign they are not a member
    of, as for one that does not exist; 403 when they may see the campaign but not its report)."""
    if campaign_id in (None, ""):
        if not reads_all_gold(user):
            raise ActionError(Code.FORBIDDEN, "Benchmark-wide reports are for staff and researchers; members "
                              "read their campaigns' reports.")
        if (Benchmark.objects.filter(slug=benchmark_slug).exists()
                and not readable_benchmark_reports(user).filter(slug=benchmark_slug).exists()):
            raise ActionError(Code.FORBIDDEN, "You label on this benchmark: its reports and gold are not for you.")
        return
    campaign = Campaign.objects.filter(pk=campaign_id, benchmark__slug=benchmark_slug).first()
    access = policy.access_of(user, campaign) if campaign is not None else None
    if access is None or not (access.roles or access.reads_gold):
        raise ActionError(Code.NOT_FOUND, f"no campaign {campaign_id} in benchmark {benchmark_slug!r}")
    if not access.reads_gold:
        raise ActionError(Code.FORBIDDEN, "A campaign's report is for staff, researchers and the campaign's "
                          "managers, viewers and experts (not the voting experts of a gold panel, nor people who label "
                          "on the benchmark).")


def readable_benchmark_reports(user):
    """The benchmarks whose benchmark-wide reports the user may read: staff all; researchers all but those they
    label on (the benchmarks whose gold they read, benchmarks.permissions.gold_benchmarks); nobody else any."""
    if not reads_all_gold(user):
        return Benchmark.objects.none()
    gold = gold_benchmarks(user)
    return Benchmark.objects.all() if gold is None else Benchmark.objects.filter(pk__in=gold)


def readable_report_campaigns(user, benchmark_ids=None):
    """Ids of the campaigns (optionally of some benchmarks) whose reports the user may read."""
    campaigns = Campaign.objects.all()
    if benchmark_ids is not None:
        campaigns = campaigns.filter(benchmark_id__in=benchmark_ids)
    return policy.campaigns_with_readable_gold(user, campaigns)


# Lists of per-person figures inside a row that belongs to one campaign (reports/sections: the crowd's
# annotator models, the alternative test's per-annotator results, the raters of a rating table).
PER_PERSON_LISTS = ("annotators", "per_annotator", "human_raters")


def without_people_of(report, campaign_ids):
    """The report less the annotators' names and per-person figures of `campaign_ids`: their rows in
    `annotators`, the per-person lists of every row of those campaigns, and their entries in lists that pool
    campaigns (`human_raters`)."""
    hidden = set(campaign_ids)
    if not hidden:
        return report
    names = {row["annotator"] for row in report["annotators"] if row["campaign_id"] in hidden}

    def shown(entry):
        if not isinstance(entry, dict):
            return True
        if "campaign_id" in entry:
            return entry["campaign_id"] not in hidden
        return entry.get("rater") not in names and entry.get("annotator") not in names

    def walk(node):
        if isinstance(node, dict):
            of_hidden_campaign = node.get("campaign_id") in hidden
            for key, value in node.items():
                if key.startswith("_"):
                    continue
                if isinstance(value, list) and key in PER_PERSON_LISTS and of_hidden_campaign:
                    node[key] = []
                elif isinstance(value, list) and key in PER_PERSON_LISTS:
                    node[key] = [entry for entry in value if shown(entry)]
                    walk(node[key])
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(report)
    report["scope"]["people_hidden_for_campaigns"] = sorted(hidden)
    return report


class ReportPending(Exception):
    """No fresh stored report yet: `stored` says how far its computation has got."""

    def __init__(self, stored):
        super().__init__(f"the report is {stored.state}")
        self.stored = stored

    def as_dict(self):
        return {"code": "report_computing", "detail": "The report is being computed; ask again shortly.",
                **status_of(self.stored)}


def status_of(stored):
    """What a reader is told about a stored report while it is computed (the page polls it)."""
    return {"state": stored.state, "progress": stored.progress, "step": stored.step,
            "step_text": gettext(stored.step) if stored.step else stored.step, "stale": stored.is_stale,
            "stale_since": stored.stale_since.isoformat() if stored.stale_since else None,
            "computed_at": stored.computed_at.isoformat() if stored.computed_at else None,
            "has_report": stored.has_report,
            "error": stored.error or None}


class Served:
    """A stored report as one reader may read it: `text(fmt)` renders it (kept renderings when the reader sees
    the whole report, else rendered from the stored figures less the people they may not see)."""

    def __init__(self, stored, hidden_campaigns):
        self.stored, self.hidden = stored, hidden_campaigns

    @property
    def has_report(self):
        return self.stored.has_report

    def fresh_text(self, fmt):
        """The report in `fmt` when a fresh one is stored; ReportPending while it is computed or stale (the API's
        202, the report page's downloads)."""
        stored = self.stored
        if not stored.has_report or stored.is_stale or stored.state != stored.State.READY:
            raise ReportPending(stored)
        return self.text(fmt)

    def text(self, fmt):
        """The report in `fmt`, in the language of the request being answered (the reader's: frontend.middleware)."""
        language = translation.get_language()
        if not self.hidden:
            return store.rendered(self.stored, fmt, language)
        report, _ = store.report_of(self.stored)
        return render(without_people_of(report, self.hidden), fmt, language)


def stored_report_for(user, benchmark, campaign=None, gold_version=None, options=ReportOptions()):
    """The stored report `user` may read (Served); queues a computation when there is none or it is stale
    (reports.store)."""
    check_report_access(user, benchmark, campaign)
    stored = store.fetch(benchmark, campaign, gold_version, options, requested_by=user)
    hidden = set()
    if campaign in (None, "") and not policy.staff_roles(user):
        hidden = set(stored.campaign_ids) - readable_report_campaigns(user)
    return Served(stored, hidden)


def report_for(user, benchmark, campaign=None, gold_version=None, options=ReportOptions(), fmt="json"):
    """The fresh report `user` may read, as text in `fmt`: refused (ActionError), pending (ReportPending) or
    served from storage."""
    return stored_report_for(user, benchmark, campaign, gold_version, options).fresh_text(fmt)
