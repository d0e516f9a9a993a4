"""The reads behind a report: one set-based query per table, whatever the number of items (14 for
a benchmark, 15 with a campaign), plus the few that choose the gold and say why (reports.gold).

Every function returns plain Python (dicts, lists, tuples) so that the report's builders never touch
the ORM. The row-heavy tables (items, gold labels, annotations, predictions) are values_list
querysets (`row_querysets`) read column-wise by `columns`: through COPY on PostgreSQL, through the
ORM elsewhere.

One module per job: scope (which benchmark, campaign and gold), reading (rows read column-wise, COPY and its
decoding), expressions (the SQL that picks an option and counts options), items (tasks, items, gold), campaigns
(settings, batches, annotations, QC, annotators, inclusion), runs (runs and predictions), arena (pairwise judges'
steps, the dialogues behind the pairs), report (all of them put together: `report_data`).
Callers use the names re-exported here: `from reports.selectors import report_data, resolve_scope`.
"""
from .arena import arena_dialogues, pairwise_steps
from .campaigns import (
                        annotation_columns,
                        annotation_rows,
                        answer_keys,
                        batch_rows,
                        campaign_queryset,
                        campaign_rows,
                        inclusion_rows,
                        label_questions,
                        qc_rows,
                        user_rows,
)
from .expressions import AccPick, OptionCount
from .items import gold_rows, item_queryset, item_rows, task_rows
from .reading import INTEGER_TYPES, columns, read_columns
from .report import report_data, row_querysets
from .runs import prediction_rows, run_queryset, run_rows
from .scope import Scope, resolve_scope

__all__ = [
    "Scope",
    "resolve_scope",
    "columns",
    "read_columns",
    "INTEGER_TYPES",
    "AccPick",
    "OptionCount",
    "task_rows",
    "item_queryset",
    "item_rows",
    "gold_rows",
    "label_questions",
    "campaign_queryset",
    "campaign_rows",
    "batch_rows",
    "annotation_rows",
    "annotation_columns",
    "qc_rows",
    "user_rows",
    "answer_keys",
    "inclusion_rows",
    "run_queryset",
    "run_rows",
    "prediction_rows",
    "pairwise_steps",
    "arena_dialogues",
    "row_querysets",
    "report_data",
]
