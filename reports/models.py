"""Stored reports: one per scope (benchmark, campaign, gold) and options, computed on the `cpu` queue
and served from here until one of its inputs changes (see reports.store)."""
from django.conf import settings
from django.db import models


class StoredReport(models.Model):
    class State(models.TextChoices):
        NEW = "new"  # never asked for computing yet
        QUEUED = "queued"
        COMPUTING = "computing"
        READY = "ready"
        FAILED = "failed"

    key = models.CharField(max_length=64, unique=True)  # sha256 of the scope and options (reports.store.report_key)
    benchmark = models.ForeignKey("benchmarks.Benchmark", on_delete=models.CASCADE, related_name="+")
    campaign_id = models.BigIntegerField(null=True, blank=True)
    gold_version_id = models.BigIntegerField(null=True, blank=True)
    query = models.JSONField(default=dict)  # how the scope was asked for: campaign, gold_version (resolve_scope)
    options = models.JSONField(default=dict)
    state = models.CharField(max_length=12, choices=State.choices, default=State.NEW)
    progress = models.FloatField(default=0.0)  # 0..1 while computing
    step = models.CharField(max_length=80, blank=True)
    # Set by the database (triggers in migration 0002) the moment a row the report reads changes.
    stale_since = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    requested_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    inputs = models.JSONField(default=dict)  # sha256 of items, labels, gold, predictions and code
    report = models.JSONField(null=True, blank=True)
    # Bumped each time the stored figures change: a rendering (ReportText) serves only its own generation.
    generation = models.PositiveIntegerField(default=0)
    # The campaigns the report shows, so the people cut (reports.access) is decided without reading the report.
    campaign_ids = models.JSONField(default=list)
    error = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["benchmark"], condition=models.Q(stale_since__isnull=True),
                                name="storedreport_fresh_benchmark")]

    @property
    def has_report(self):
        return self.computed_at is not None  # set with the report, never cleared

    @property
    def is_stale(self):
        return self.stale_since is not None

    @property
    def in_flight(self):
        return self.state in (self.State.QUEUED, self.State.COMPUTING)


class ReportText(models.Model):
    """A stored report rendered in one format (json, csv, html, latex), kept so that serving it is sending text:
    rendered on first request and dropped when the figures change (a new generation)."""
    stored = models.ForeignKey(StoredReport, on_delete=models.CASCADE, related_name="texts")
    format = models.CharField(max_length=8)
    # The reader's language for a format that has one (reports.render.text_language), else "".
    language = models.CharField(max_length=16, blank=True, default="")
    generation = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["stored", "format", "language", "generation"],
                                               name="reporttext_once_per_language")]


class RowsVersion(models.Model):
    """How many times a benchmark's tasks or items have changed (its runs count per run since migration 0006,
    RunRowsVersion): bumped by the database (triggers of
    migration 0004, reports.triggers) in the transaction that changes them, so a report computation reads, in its
    own snapshot, whether the rows it kept from an earlier computation are still the ones (reports.kept_rows).
    No foreign key: a benchmark being deleted still bumps its count on the way out."""
    benchmark_id = models.BigIntegerField(primary_key=True)
    version = models.BigIntegerField(default=0)


class RunRowsVersion(models.Model):
    """How many times a run, its tasks or its predictions have changed: bumped by the database (triggers of
    migration 0006, reports.triggers) in the transaction that changes them, so that a report computation re-reads the
    predictions of the runs that changed and keeps the others' (reports.kept_rows). No foreign key, as RowsVersion."""
    run_id = models.BigIntegerField(primary_key=True)
    version = models.BigIntegerField(default=0)
