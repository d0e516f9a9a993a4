"""The models' side of a report: the finished runs in scope and their predictions."""
from __future__ import annotations

from django.db.models import Case, CharField, When

from modeleval.models import EvalRun, Prediction, RunState
from modeleval.modes import modes_where
from studies.vocabulary import Rule

from .expressions import AccPick
from .items import item_queryset


def run_queryset(scope, task_ids):
    return (EvalRun.objects.filter(benchmark=scope.benchmark, state=RunState.FINISHED, tasks__in=task_ids)
            .distinct().order_by("id"))


def run_rows(scope, task_ids):
    runs = list(run_queryset(scope, task_ids).values(
        "id", "mode", "settings", "prompt_version", "prompt_sha256", "position_policy", "seed", "finished_at",
        "model__name", "model__source", "model__api_model", "model__sha256", "model__revision", "model__dtype",
        "model__trained_by__settings"))
    tasks = EvalRun.tasks.through.objects.filter(evalrun__in=run_queryset(scope, task_ids), task_id__in=task_ids)
    by_run = {}
    for run_id, task_id in tasks.values_list("evalrun_id", "task_id"):
        by_run.setdefault(run_id, []).append(task_id)
    for run in runs:
        run["task_ids"] = sorted(by_run.get(run["id"], []))
        run["finished_at"] = run["finished_at"].isoformat() if run["finished_at"] else None
    return runs


def prediction_rows(scope, task_ids):
    """Predictions of the runs in scope; `acc_pick` only where the run's own answer is not already
    lm-eval's acc (log-likelihood runs under another rule), as reading options is what costs."""
    runs = run_queryset(scope, task_ids)
    needs_pick = runs.filter(mode__in=modes_where(by_rule=True)).exclude(settings__rule=Rule.ACC).values("id")
    return (Prediction.objects.filter(run__in=runs, item__in=item_queryset(scope, task_ids).values("id"))
            .order_by()
            .annotate(acc_pick=Case(When(run__in=needs_pick, then=AccPick("options")), default=None,
                                    output_field=CharField()))
            .values_list("run_id", "item_id", "variant", "answer", "answer_norm", "answer_per_token", "acc_pick",
                         "parse_status", "gold", "rating"))
