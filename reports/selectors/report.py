"""Everything a report reads, put together: the row-heavy tables in one pass (`row_querysets`), the rest beside
them."""
from __future__ import annotations

from ..contract import ReportData
from ..gold import GoldChoice
from ..provenance import code_version
from .arena import arena_dialogues, pairwise_steps
from .campaigns import (
    annotation_columns,
    annotation_rows,
    answer_keys,
    batch_rows,
    campaign_rows,
    inclusion_rows,
    qc_rows,
    user_rows,
)
from .items import gold_rows, item_rows, task_rows
from .reading import read_columns
from .runs import prediction_rows, run_rows


def row_querysets(scope, tasks):
    """The row-heavy reads (items, gold, annotations, predictions): what a report costs grows with these."""
    task_ids = [t["id"] for t in tasks]
    return {"items": item_rows(scope, task_ids),
            "gold": gold_rows(scope, task_ids) if scope.gold_version else None,
            "annotations": annotation_rows(scope, task_ids, answer_keys(tasks)[0]),
            "predictions": prediction_rows(scope, task_ids)}


def report_data(scope, kept=None) -> ReportData:
    """Everything the report needs, in a fixed number of queries; `kept` (reports.kept_rows.KeptRows), when given,
    supplies the items and predictions it kept from an earlier computation where they have not changed."""
    tasks = task_rows(scope)
    task_ids = [t["id"] for t in tasks]
    querysets = row_querysets(scope, tasks)
    rows = kept.read(scope, task_ids, querysets) if kept is not None else read_columns(querysets)
    items = rows["items"]
    gold_version = scope.gold_version
    choice = scope.gold or GoldChoice(gold_version, "request" if gold_version else "source", "")
    return ReportData(
        benchmark={field: getattr(scope.benchmark, field)
                   for field in ("slug", "name", "version", "language", "source", "licence")},
        campaign_id=scope.campaign.pk if scope.campaign else None,
        gold_version=None if gold_version is None else {
            "number": gold_version.number, "citation": gold_version.citation, "campaign_id": gold_version.campaign_id,
            "frozen_at": gold_version.frozen_at.isoformat(), "note": gold_version.note},
        tasks=tasks,
        items=items,
        gold=dict(zip(*rows["gold"].values(), strict=True)) if rows["gold"] is not None else None,
        campaigns=campaign_rows(scope),
        batches=batch_rows(scope),
        annotations=annotation_columns(rows["annotations"], tasks),
        qc=qc_rows(scope),
        users=user_rows(scope),
        runs=run_rows(scope, task_ids),
        predictions=rows["predictions"],
        code=code_version(),
        dialogues=arena_dialogues(scope, tasks),
        pairwise_steps=pairwise_steps(scope, tasks),
        gold_choice=choice.describe(set(items["id"])),
        inclusion=inclusion_rows(scope),
    )
