"""Which gold a report cites, and why (a selector: reads only).

- A campaign's report cites the gold its managers pinned (`Campaign.pinned_gold`, set through
  `annotation.actions.pin_gold_version`), else the gold published with the data.
- A benchmark-level report cites the gold chosen for the benchmark (`BenchmarkGold`, chosen by staff or
  holders of `annotation.choose_benchmark_gold`), else the gold published with the data.
- `gold_version=N` in the request overrides both, and says so.

A gold version derived from people's labels never scores those people: a campaign's report refuses a
requested one and falls back to the source gold from a pinned one; a benchmark-level report leaves
the campaigns whose raters made it out of "the humans". The choice, its reason, what was declined and
the items the version left out (ties, unfinished) travel with the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from annotation.models import Annotation, BenchmarkGold, Campaign, Event, EventKind, GoldVersion, Protocol
from annotation.selectors import circular_gold
from benchmarks.models import Item

from . import texts

SOURCE = "the gold published with the data (items' source gold)"


@dataclass(frozen=True)
class GoldChoice:
    version: GoldVersion | None  # None: the items' source gold
    chosen_by: str  # request, campaign, benchmark or source
    why: str
    declined: dict | None = None  # {citation, reason}: a version passed over because it would be circular
    excluded_campaigns: dict = field(default_factory=dict)  # campaign id -> why its people are not "the humans"

    def describe(self, items_in_scope=None):
        """The JSON-ready `gold` block of the report."""
        version = self.version
        out = {"citation": version.citation if version else "source", "chosen_by": self.chosen_by, "why": self.why,
               "declined": self.declined,
               "excluded_campaigns": [{"campaign_id": c, "reason": r}
                                      for c, r in sorted(self.excluded_campaigns.items())],
               "derived_from_campaign": None, "method": "source", "left_out": []}
        if version is None:
            return out
        methods = set(version.labels.values_list("method", flat=True).distinct())
        out["method"] = ", ".join(sorted(methods)) or "no labels"
        out["derived_from_campaign"] = version.campaign_id if methods - {"source"} else None
        ids = {i for ids in (version.left_out or {}).values() for i in ids}
        external = dict(Item.objects.filter(pk__in=ids).values_list("id", "external_id"))
        for reason, item_ids in sorted((version.left_out or {}).items()):
            if items_in_scope is not None:
                item_ids = [i for i in item_ids if i in items_in_scope]
            if item_ids:
                out["left_out"].append({"reason": reason, "count": len(item_ids),
                                        "items": [external.get(i, str(i)) for i in item_ids]})
        return out


class GoldRefused(Exception):
    pass


def _frozen(benchmark, number):
    version = GoldVersion.objects.filter(benchmark=benchmark, number=number).select_related("benchmark").first()
    if version is None:
        raise LookupError(f"no gold version {number} of benchmark {benchmark.slug!r}")
    if version.frozen_at is None:
        raise GoldRefused(f"{version.citation} is a draft; freeze it before a report cites it")
    return version


def human_campaign_ids(benchmark, campaign):
    if campaign is not None:
        return [campaign.pk]
    return list(Campaign.objects.filter(benchmark=benchmark).exclude(protocol=Protocol.GOLD_PANEL)
                .filter(pk__in=Annotation.objects.values("campaign_id")).values_list("pk", flat=True))


def _pinned_why(campaign, version):
    event = (Event.objects.filter(campaign=campaign, kind=EventKind.GOLD_VERSION_PINNED).select_related("actor")
             .order_by("-id").first())
    if event is None:
        return texts.GOLD_PINNED(campaign=campaign.pk, version=version.citation)
    parts = {"campaign": campaign.pk, "version": version.citation, "date": f"{event.created_at:%Y-%m-%d}",
             "user": event.actor.username if event.actor else None, "reason": event.reason}
    template = ((texts.GOLD_PINNED_BY_BECAUSE if event.reason else texts.GOLD_PINNED_BY) if event.actor else
                (texts.GOLD_PINNED_ON_BECAUSE if event.reason else texts.GOLD_PINNED_ON))
    return template(**parts)


def resolve_gold(benchmark, campaign=None, requested=None) -> GoldChoice:
    """The gold a report on `benchmark` (optionally one campaign) cites; see the module docstring.
    Raises LookupError for an unknown version and GoldRefused for a draft or a circular request."""
    humans = human_campaign_ids(benchmark, campaign)
    if requested not in (None, ""):
        version = _frozen(benchmark, requested)
        circular = circular_gold(version, humans)
        if campaign is not None and circular:
            raise GoldRefused(f"{circular[campaign.pk]}. Leave gold_version out to use the campaign's pinned gold or "
                              "the source gold, or cite a gold made by other raters.")
        return GoldChoice(version, "request",
                          texts.GOLD_REQUESTED(version=version.citation, requested=requested),
                          excluded_campaigns=circular)
    if campaign is not None:
        version = campaign.pinned_gold
        if version is None:
            return GoldChoice(None, "source", texts.GOLD_NOT_PINNED(campaign=campaign.pk, source=SOURCE))
        circular = circular_gold(version, humans)
        if circular:
            return GoldChoice(None, "source", texts.GOLD_PINNED_DECLINED(source=SOURCE, version=version.citation),
                              declined={"citation": version.citation, "reason": circular[campaign.pk]})
        return GoldChoice(version, "campaign", _pinned_why(campaign, version))
    choice = BenchmarkGold.objects.filter(benchmark=benchmark).select_related("version__benchmark", "chosen_by").last()
    if choice is None or choice.version is None:
        return GoldChoice(None, "source", texts.GOLD_NOT_CHOSEN(benchmark=benchmark.slug, source=SOURCE)
                          if choice is None else texts.GOLD_SOURCE_CHOSEN(source=SOURCE))
    version = choice.version
    parts = {"benchmark": benchmark.slug, "date": f"{choice.chosen_at:%Y-%m-%d}",
             "user": choice.chosen_by.username if choice.chosen_by else None, "reason": choice.reason}
    template = ((texts.GOLD_CHOSEN_BY_BECAUSE if choice.reason else texts.GOLD_CHOSEN_BY) if choice.chosen_by else
                (texts.GOLD_CHOSEN_ON_BECAUSE if choice.reason else texts.GOLD_CHOSEN_ON))
    return GoldChoice(version, "benchmark", template(**parts), excluded_campaigns=circular_gold(version, humans))
