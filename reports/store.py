"""Stored reports: computed on the `cpu` queue, kept with the sha256 of their inputs, served from the
database until an input changes.

A report is stored per scope (benchmark, campaign, the gold it cites and why) and options; the people
cut (reports.access) is applied when it is served, so one stored report serves every reader of that
scope. The database marks a stored report stale the moment a row it reads changes (triggers of
migration 0002); a new code version makes it stale too. The computing process keeps the items and predictions it
read for the next computation of the same benchmark, re-read only when the database says they changed
(reports.kept_rows), and the figures per task of its latest computation, taken again for the tasks whose labels
and gold did not change (reports.parts). A stale report is still served, marked
as such, while the new one is computed; a recompute whose inputs hash as before keeps the figures.
"""
import hashlib
from dataclasses import asdict

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from benchmarks.models import canonical_json

from .build import build_report, collector_paused
from .contract import ReportOptions
from .kept_rows import kept_rows
from .limits import BUSY_RETRY_AFTER_S, ReportBusy
from .models import ReportText, StoredReport
from .parts import base_digest, kept_parts, sha256_of
from .provenance import code_version
from .render import render, text_language
from .selectors import report_data, resolve_scope

State = StoredReport.State
TASK = "reports.tasks.compute_report"


def report_key(scope, options: ReportOptions):
    gold = scope.gold
    described = None if gold is None else {
        "version": gold.version.pk if gold.version else None, "chosen_by": gold.chosen_by, "why": gold.why,
        "declined": gold.declined, "excluded": sorted(gold.excluded_campaigns.items())}
    return hashlib.sha256(canonical_json({
        "benchmark": scope.benchmark.pk, "campaign": scope.campaign.pk if scope.campaign else None,
        "gold_version": scope.gold_version.pk if scope.gold_version else None, "gold": described,
        "options": asdict(options)}).encode()).hexdigest()


def code_sha256():
    return hashlib.sha256(canonical_json(code_version()).encode()).hexdigest()


def input_hashes(data):
    """sha256 of what a report reads, by input: items (and forms), labels (with batches, QC and
    campaigns' settings), gold, predictions (with runs) and code."""
    return {
        "items": sha256_of(data.tasks, data.items, data.benchmark),
        "labels": sha256_of(data.annotations, data.campaigns, data.batches, data.qc, data.users, data.dialogues),
        "gold": sha256_of(data.gold_version, data.gold, data.gold_choice),
        "predictions": sha256_of(data.runs, data.predictions, data.pairwise_steps),
        "code": code_sha256(),
    }


def needs_computing(stored):
    return (not stored.has_report or stored.is_stale or stored.state == State.FAILED
            or stored.inputs.get("code") != code_sha256())


def fetch(benchmark_slug, campaign=None, gold_version=None, options=ReportOptions(), requested_by=None):
    """The stored report of this scope and options, its computation queued (or, with
    REPORTS_COMPUTE_IN_REQUEST, done here) when there is none or it is stale. ActionError for a bad
    scope; ReportBusy when the user already has REPORT_CONCURRENCY_PER_USER computations queued."""
    scope = resolve_scope(benchmark_slug, campaign, gold_version)
    # The report itself is read only when it is rendered (reports.store.rendered), not to decide what to serve.
    stored, _ = StoredReport.objects.defer("report").get_or_create(
        key=report_key(scope, options),
        defaults={"benchmark": scope.benchmark, "campaign_id": scope.campaign.pk if scope.campaign else None,
                  "gold_version_id": scope.gold_version.pk if scope.gold_version else None,
                  "query": {"campaign": campaign, "gold_version": gold_version}, "options": asdict(options)})
    if stored.in_flight or not needs_computing(stored):
        return stored  # a computation in flight that missed a change leaves its report stale: asked again then
    user = requested_by if requested_by is not None and requested_by.is_authenticated else None
    if user is not None and not settings.REPORTS_COMPUTE_IN_REQUEST:
        mine = StoredReport.objects.filter(requested_by=user, state__in=(State.QUEUED, State.COMPUTING))
        if mine.exclude(pk=stored.pk).count() >= settings.REPORT_CONCURRENCY_PER_USER:
            raise ReportBusy(f"{settings.REPORT_CONCURRENCY_PER_USER} of your reports are being computed already; "
                             f"try again in a few seconds.", BUSY_RETRY_AFTER_S)
    # One request queues it: the others find it queued.
    queued = (StoredReport.objects.filter(pk=stored.pk).exclude(state=State.QUEUED)
              .update(state=State.QUEUED, progress=0.0, step=gettext_noop("waiting for a worker"), requested_by=user,
                      requested_at=timezone.now(), error=""))
    if queued:
        if settings.REPORTS_COMPUTE_IN_REQUEST:
            compute(stored.pk)
        else:
            transaction.on_commit(lambda: current_app.send_task(TASK, args=[stored.pk]))
    stored.refresh_from_db(fields=[f.attname for f in StoredReport._meta.concrete_fields if f.name != "report"])
    return stored


def report_of(stored):
    """(the stored figures, their generation), read together."""
    return StoredReport.objects.filter(pk=stored.pk).values_list("report", "generation").get()


def rendered(stored, fmt, language=None):
    """The stored report as text in `fmt` for a reader of `language` (None: English): kept from an earlier request of
    this generation in that language, or rendered now from the stored figures and kept. Only for readers who see the
    whole report (reports.access decides)."""
    language = text_language(fmt, language)
    text = (ReportText.objects.filter(stored_id=stored.pk, format=fmt, language=language, generation=stored.generation)
            .values_list("text", flat=True).first())
    if text is None:
        report, generation = report_of(stored)
        text = render(report, fmt, language)
        # A recompute may have replaced the figures since `stored` was read: the text is kept under the generation
        # it was rendered from, which is served only while it is the current one.
        ReportText.objects.bulk_create([ReportText(stored_id=stored.pk, format=fmt, language=language,
                                                   generation=generation, text=text)],
                                       ignore_conflicts=True)
    return text


def progress_of(stored_id):
    def report(fraction, step):
        StoredReport.objects.filter(pk=stored_id).update(progress=round(fraction, 3), step=step)
    return report


def compute(stored_id):
    """Compute (or confirm) one stored report; run by the `cpu` worker (reports.tasks)."""
    # Stale marks from here on are changes this computation may not see: it starts from a clean mark.
    started = (StoredReport.objects.filter(pk=stored_id).filter(~Q(state=State.READY) | Q(stale_since__isnull=False))
               .update(state=State.COMPUTING, started_at=timezone.now(), stale_since=None, progress=0.0,
                       step=gettext_noop("reading the rows")))
    if not started:
        return "nothing to do"
    stored = StoredReport.objects.select_related("benchmark").get(pk=stored_id)
    parts = None
    try:
        # Every row read from one snapshot, no label half in, half out (when this is the outermost transaction).
        snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
        with collector_paused():
            with transaction.atomic():
                if snapshot:
                    connection.cursor().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                scope = resolve_scope(stored.benchmark.slug, stored.query.get("campaign"),
                                      stored.query.get("gold_version"))
                data = report_data(scope, kept=kept_rows)
            inputs = input_hashes(data)
            same_figures = inputs == stored.inputs and stored.report is not None
            if same_figures:
                report = stored.report  # the same inputs: the same figures (and the same renderings)
            else:
                progress = progress_of(stored_id)
                progress(0.3, gettext_noop("computing the statistics"))
                options = ReportOptions(**stored.options)
                parts = kept_parts.session(base_digest(data, inputs, options)) if settings.REPORTS_KEEP_ROWS \
                    else None
                report = build_report(data, options, progress=progress, parts=parts)
                if report.get("multiple_choice"):
                    report["multiple_choice"].pop("_results", None)  # working arrays, not part of the report
        if not same_figures and parts is not None:
            parts.keep()
    except Exception as error:
        StoredReport.objects.filter(pk=stored_id).update(state=State.FAILED, error=repr(error)[:2000], step="failed")
        raise
    with transaction.atomic():
        figures = {} if same_figures else {
            "report": report, "generation": F("generation") + 1,
            "campaign_ids": [c["campaign_id"] for c in report.get("campaigns", [])]}
        StoredReport.objects.filter(pk=stored_id).update(state=State.READY, progress=1.0, step="ready", inputs=inputs,
                                                         computed_at=timezone.now(), **figures)
        if not same_figures:
            ReportText.objects.filter(stored_id=stored_id).delete()
    return "computed"
