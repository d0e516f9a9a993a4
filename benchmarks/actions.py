"""Writes to benchmarks: importing a file is one transaction that writes everything or nothing."""
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.utils import timezone
from django.utils.text import slugify
from psycopg.copy import QueuedLibpqWriter

from core.slots import Slot

from .formschema import without_names
from .importers import EXPORT_FORMATS, FORMATS, ImportFailure, detect
from .importers.jsonl import HEADER_KEYS
from .models import Benchmark, Item, Task, canonical_json, hash_of_encoded
from .permissions import can_import_items


@dataclass
class ImportSummary:
    benchmark: str
    tasks_created: int
    items_created: int
    items_unchanged: int
    labels: object = None  # what the people's labels a file carries came to (the ratings importer's summary)
    predictions: object = None  # what the models' predictions a file carries came to (imported runs)

    def __str__(self):
        text = (f"{self.benchmark}: {self.tasks_created} tasks and {self.items_created} items created, "
                f"{self.items_unchanged} items already there unchanged")
        return "; ".join(str(part) for part in (text, self.labels, self.predictions) if part is not None)


class CarriedLabels(Protocol):
    """Stores the people's labels an item file carries (JUDGE-BENCH's individual scores) as annotations, inside the
    import's transaction: annotation's ratings importer, which benchmarks does not import."""

    def __call__(self, path, format_name, benchmark_slug): ...


carried_labels: Slot[CarriedLabels] = Slot(CarriedLabels)


class CarriedPredictions(Protocol):
    """Stores the models' predictions an item file carries (a Label Studio export's) as imported runs, inside the
    import's transaction: model evaluation's verdicts importer, which benchmarks does not import."""

    def __call__(self, path, format_name, benchmark_slug): ...


carried_predictions: Slot[CarriedPredictions] = Slot(CarriedPredictions)


class InUse(Exception):
    """An item or task that labels, gold, predictions, batches or campaigns refer to: not changed, as the
    importer refuses changing a stored item (what was labelled stays what it was)."""

    code = "in_use"

    def __init__(self, kinds):
        self.kinds = sorted(kinds)
        super().__init__(f"Referred to by {', '.join(self.kinds)}; import a new benchmark version instead of "
                         f"changing it.")


def change_unused(stored, *, actor, changes):
    """Write `changes` (validated fields) to an item or task that nothing refers to yet; staff only. The row
    is locked first, so that a label given meanwhile either comes before (refused) or after (it sees the change)."""
    if not (actor and actor.is_staff):
        raise PermissionDenied("Only staff change stored items and tasks.")
    with transaction.atomic():
        stored = type(stored).objects.select_for_update().get(pk=stored.pk)
        kinds = stored.used_by()
        if kinds:
            raise InUse(kinds)
        for field, value in changes.items():
            setattr(stored, field, value)
        stored.save()
    return stored


def parse_file(path, format_name=None, task=None):
    """The file parsed in its format; without one, the format its first record shows. `task`: the task of a file
    of one task whose format reads it from the file's name (DialogBench's published shapes)."""
    format_name = format_name or detect(path)
    if format_name not in FORMATS:
        raise ImportFailure(path, None, "--format", f"unknown format {format_name!r}; expected one of "
                                                    f"{sorted(FORMATS)}")
    importer = FORMATS[format_name]
    if not task:
        return importer.parse(Path(path))
    if not getattr(importer, "NAMED_TASK", False):
        takes = sorted(name for name, module in FORMATS.items() if getattr(module, "NAMED_TASK", False))
        raise ImportFailure(path, None, "--task", f"the {format_name} format names its own tasks; a task is named "
                                                  f"only for {', '.join(takes)}")
    return importer.parse(Path(path), task=task)


def import_items(path, format_name, benchmark_slug, task=None):
    """Import a file into a benchmark (created when new). Malformed input raises ImportFailure and writes nothing.
    Without a format name, the format is detected from the file's first record (importers.detect).

    Items stream from the parser into the database inside one transaction, so a large file costs
    little memory and PostgreSQL ingests rows while later lines are still being parsed; an error
    on any line rolls the whole import back.
    """
    if not benchmark_slug or slugify(benchmark_slug) != benchmark_slug:
        raise ImportFailure(path, None, "--benchmark", "expected a slug (lowercase letters, digits, hyphens), got "
                                                       f"{benchmark_slug!r}")
    format_name = format_name or detect(path)
    parsed = parse_file(path, format_name, task)
    labels = predictions = None
    with transaction.atomic():
        header = {key: parsed.header.get(key, "") for key in HEADER_KEYS}
        header["name"] = header["name"] or benchmark_slug
        benchmark, _ = Benchmark.objects.select_for_update().get_or_create(slug=benchmark_slug, defaults=header)
        tasks_created, counts = add_tasks_and_items(benchmark, parsed.tasks, parsed.items, source=path)
        if counts["new"] + counts["unchanged"] == 0:
            raise ImportFailure(path, None, None, "no items in the file")
        if getattr(FORMATS[format_name], "CARRIES_LABELS", False):
            labels = carried_labels.provider(path, format_name, benchmark_slug)
        if getattr(FORMATS[format_name], "CARRIES_PREDICTIONS", False):
            predictions = carried_predictions.provider(path, format_name, benchmark_slug)
    return ImportSummary(benchmark_slug, tasks_created, counts["new"], counts["unchanged"], labels, predictions)


def add_tasks_and_items(benchmark, task_specs, records, *, source):
    """Tasks (TaskSpec) and items (ItemRecord) into `benchmark`, inside the caller's transaction: the one
    way items are written, by the file importers and by the builders of generated benchmarks (self-chat,
    arena). A task already there must have the same form (its names in other languages aside: the task keeps
    its own); an item id already there the same content
    (ImportFailure naming `source` otherwise); records may name the benchmark's tasks without a spec.
    (tasks created, {"new": n, "unchanged": n})."""
    tasks, tasks_created = {task.slug: task for task in Task.objects.filter(benchmark=benchmark)}, 0
    for spec in task_specs:
        task = tasks.get(spec.slug)
        if task is None:
            task = Task.objects.create(benchmark=benchmark, slug=spec.slug, name=spec.name, form=spec.form,
                                       dimension=spec.dimension, instructions=spec.instructions,
                                       source_names=sorted(spec.source_names))
            tasks_created += 1
        elif canonical_json(without_names(task.form)) != canonical_json(without_names(spec.form)):
            raise ImportFailure(source, None, "form", f"task {spec.slug!r} already exists in {benchmark.slug!r} with "
                                                      "a different answer form; import into a new benchmark version")
        elif new_names := set(spec.source_names) - set(task.source_names):
            task.source_names = sorted({*task.source_names, *new_names})
            Task.objects.filter(pk=task.pk).update(source_names=task.source_names)
        tasks[spec.slug] = task
    existing = {
        (task_slug, external_id): digest
        for task_slug, external_id, digest in Item.objects.filter(task__in=tasks.values())
        .values_list("task__slug", "external_id", "content_hash")
    }
    counts = {"new": 0, "unchanged": 0}
    insert_items(new_item_rows(source, records, tasks, existing, counts))
    return tasks_created, counts


def new_item_rows(path, records, tasks, existing, counts):
    """Yield (task id, record, hash, canonical JSON of its parts) for items not yet in the benchmark.

    Refuses a duplicate id within the file and a changed item under an id already stored."""
    seen = {}
    for record in records:
        key = (record.task, record.external_id)
        if key in seen:
            raise ImportFailure(path, record.location, "id", f"duplicate external id {record.external_id!r} in task "
                                                             f"{record.task!r} (first at {seen[key]})")
        seen[key] = record.location
        encoded = [canonical_json(part) for part in (record.dialogue, record.fields, record.meta, record.source_gold)]
        digest = hash_of_encoded(*encoded)
        known = existing.get(key)
        if known is None:
            counts["new"] += 1
            yield tasks[record.task].pk, record, digest, encoded
        elif known == digest:
            counts["unchanged"] += 1
        else:
            raise ImportFailure(path, record.location, "id", f"item {record.external_id!r} of task {record.task!r} "
                                                             "already exists with different content; refusing to "
                                                             "overwrite it")


def insert_items(rows):
    """Bulk insert (task_id, ItemRecord, hash, canonical JSON of its parts) rows as they come:
    COPY on PostgreSQL, batched bulk_create elsewhere."""
    now = timezone.now()
    if connection.vendor == "postgresql":
        table = Item._meta.db_table
        columns = "task_id, external_id, dialogue, fields, meta, source_gold, content_hash, created_at"
        with connection.cursor() as cursor:
            # The queued writer sends from a thread, so PostgreSQL ingests while Python parses the next lines.
            writer = QueuedLibpqWriter(cursor.cursor)
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN", writer=writer) as copy:
                for task_id, record, digest, (dialogue, fields, meta, source_gold) in rows:
                    copy.write_row((task_id, record.external_id, dialogue, fields, meta,
                                    None if record.source_gold is None else source_gold, digest, now))
        return
    rows = iter(rows)
    while batch := list(itertools.islice(rows, 2000)):
        Item.objects.bulk_create([
            Item(task_id=task_id, external_id=r.external_id, dialogue=r.dialogue, fields=r.fields, meta=r.meta,
                 source_gold=r.source_gold, content_hash=digest, created_at=now) for task_id, r, digest, _ in batch])


def export_items(benchmark_slug, format_name, path):
    """Write the benchmark in an export format; returns the number of items written."""
    if format_name not in EXPORT_FORMATS:
        raise ImportFailure(path, None, "--format", f"unknown export format {format_name!r}; expected one of "
                                                    f"{sorted(EXPORT_FORMATS)}")
    benchmark = Benchmark.objects.filter(slug=benchmark_slug).first()
    if benchmark is None:
        raise ImportFailure(path, None, "--benchmark", f"no benchmark {benchmark_slug!r}")
    tasks = list(benchmark.tasks.order_by("slug"))
    items = Item.objects.filter(task__benchmark=benchmark).select_related("task").order_by("task__slug", "external_id")
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for line in EXPORT_FORMATS[format_name].export_lines(benchmark, tasks, items.iterator(chunk_size=2000)):
            out.write(line + "\n")
            count += 1
    return count - 1 - len(tasks)


def import_upload(path, *, actor, benchmark_slug, format_name="", name="", task=""):
    """A file uploaded through the browser: the same importers and errors as `import_items`, the format
    detected from the first record when none is given, and errors naming the uploaded file rather than
    where it was stored. Returns (format name, ImportSummary)."""
    if not can_import_items(actor):
        raise PermissionDenied("Only staff or holders of benchmarks.add_item may import data.")
    name = name or Path(path).name
    try:
        format_name = format_name or detect(path)
        return format_name, import_items(path, format_name, benchmark_slug, task or None)
    except ImportFailure as failure:
        shown = name if failure.path == str(path) else failure.path
        raise ImportFailure(shown, failure.location, failure.field, failure.expected) from None
