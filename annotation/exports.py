"""Raw annotations of a campaign as files: one row per label, every round, superseded ones included.

Rows are the labels the reader may see by the annotations API's rule (`policy.labels_visible`);
the API view asks `permissions.CanReadLabels` of the campaign first, as the annotation detail does.
"""
import csv
import io
import json

from benchmarks.spreadsheet import is_number, safe_cell

from . import policy

COLUMNS = ["annotation_id", "campaign", "task", "item_external_id", "batch", "annotator", "round", "slot",
           "guideline_version", "value", "answers", "excluded", "reading_seconds", "superseded", "superseded_at",
           "submitted_at"]


def labels_for_export(user, campaign):
    return (policy.labels_visible(user).filter(campaign=campaign)
            .select_related("item__task", "batch_item__batch", "annotator", "settings")
            .order_by("batch_item__batch__number", "item__external_id", "round", "slot", "pk"))


def annotation_rows(labels):
    """One dict per label, JSON values as stored."""
    for label in labels.iterator(chunk_size=2000):
        yield {
            "annotation_id": label.pk, "campaign": label.campaign_id, "task": label.item.task.slug,
            "item_external_id": label.item.external_id, "batch": label.batch_item.batch.number,
            "annotator": label.annotator.username, "round": label.round, "slot": label.slot,
            "guideline_version": label.settings.version if label.settings else None,
            "value": label.value, "answers": label.answers, "excluded": label.excluded,
            "reading_seconds": label.dwell_seconds, "superseded": label.superseded_at is not None,
            "superseded_at": label.superseded_at.isoformat() if label.superseded_at else None,
            "submitted_at": label.submitted_at.isoformat(),
        }


def _csv_cell(value):
    if value is None:
        return ""
    if is_number(value) or isinstance(value, str):
        return safe_cell(value)
    return safe_cell(json.dumps(value, ensure_ascii=False, sort_keys=True))  # answers, lists, true/false


def to_csv(rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_csv_cell(row[column]) for column in COLUMNS])
    return out.getvalue()


def to_jsonl(rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)


FORMATS = {"csv": (to_csv, "text/csv", "csv"), "jsonl": (to_jsonl, "application/x-ndjson", "jsonl")}
