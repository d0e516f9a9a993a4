"""How many more human labels a campaign needs: the people's figure of the report's human-anchored section with a
judge run (the campaign page's planner). The figure, its items and the judge's stand-in are the report's own
(reports.sections.human_anchored.people_inputs, on the report's rows for the campaign): the mean human rating, or
the share of items whose majority label matches the gold; the interval "now" is the report's row."""
from __future__ import annotations

from core.errors import ActionError
from metrics import plan_labels, ppi_mean
from modeleval.models import EvalRun, RunState

from .rows import Rows
from .sections.human_anchored import MC_MODES, RATING_MODES, people_inputs
from .selectors.report import report_data
from .selectors.scope import resolve_scope


def judge_runs(campaign):
    """Finished runs on the campaign's benchmark that answer its tasks and can stand in for a person."""
    tasks = list(campaign.tasks.all())
    return (EvalRun.objects.filter(benchmark_id=campaign.benchmark_id, state=RunState.FINISHED,
                                   mode__in=[*MC_MODES, *RATING_MODES], tasks__in=tasks)
            .select_related("model").distinct().order_by("-id"))


def campaign_plan(campaign, run, *, target_width, confidence=0.95):
    """{estimand, judge, task, interval now (as the report gives it), the plan} or {"refused": reason}."""
    task_ids = set(campaign.tasks.values_list("id", flat=True)) & set(run.tasks.values_list("id", flat=True))
    if not task_ids:
        return {"refused": f"run {run.pk} answers none of the campaign's tasks"}
    try:
        rows = Rows(report_data(resolve_scope(campaign.benchmark.slug, campaign.pk)))
    except ActionError as error:
        return {"refused": f"the report of this campaign cannot be read: {error}"}
    inputs = [(task["slug"], people) for task in sorted(rows.data.tasks, key=lambda t: t["slug"])
              if task["id"] in task_ids and (people := people_inputs(rows, task, run.pk))]
    if not inputs:
        return {"refused": "no labelled item has the judge's answer (and, for multiple choice, a gold label): the "
                           "planner reads ratings, or multiple choice against gold"}
    if len(inputs) > 1:
        names = ", ".join(t for t, _ in inputs)
        return {"refused": f"the run answers {len(inputs)} of the campaign's tasks ({names}): the report gives each "
                           "its own figure, so plan each with a run of one task"}
    task, people = inputs[0]
    estimand = f"{people['estimand']} on task {task}"
    if people["inclusion"] is not None:
        return {"refused": "the labelled items were drawn by active selection: the planner assumes uniformly drawn "
                           "labels", "estimand": estimand}
    y, f = [a for a, _ in people["labelled"]], [b for _, b in people["labelled"]]
    plan = plan_labels(y, f, people["judge_only"], target_width=target_width, confidence=confidence)
    if plan.refused:
        return {"refused": plan.refused, "estimand": estimand}
    now = ppi_mean(y, f, people["judge_only"], confidence=confidence)
    return {"estimand": estimand, "judge": f"{run.model.name} (run {run.pk}, {run.mode})", "now": now.to_dict(),
            "plan": plan.to_dict()}
