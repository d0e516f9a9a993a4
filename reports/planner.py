"""How many more human labels a campaign needs: its final labels so far and a judge run's answers on every item
(the campaign page's planner). The estimand is the people's figure on the primary question: the mean final
label where it is a number (ratings, scores, yes/no), else the share of final labels that match the gold."""
from __future__ import annotations

from annotation.models import BatchItem, ItemStatus
from benchmarks.formschema import question, rating_values
from benchmarks.models import Item
from metrics import plan_labels, ppi_mean
from modeleval.models import EvalRun, Prediction, RunState

from .forms import task_kind
from .sections.human_anchored import MC_MODES, RATING_MODES


def judge_runs(campaign):
    """Finished runs on the campaign's benchmark that answer its tasks and can stand in for a person."""
    tasks = list(campaign.tasks.all())
    return (EvalRun.objects.filter(benchmark_id=campaign.benchmark_id, state=RunState.FINISHED,
                                   mode__in=[*MC_MODES, *RATING_MODES], tasks__in=tasks)
            .select_related("model").distinct().order_by("-id"))


def _number(value):
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _judge_value(prediction, numeric):
    if numeric:
        if prediction.rating is not None:
            return float(prediction.rating)
        try:
            return float(prediction.answer)
        except ValueError:
            return None
    return prediction.answer or None


def campaign_plan(campaign, run, *, target_width, confidence=0.95):
    """{estimand, interval now (PPI++ and classical), the plan} or {"refused": reason}."""
    task_ids = set(campaign.tasks.values_list("id", flat=True)) & set(run.tasks.values_list("id", flat=True))
    if not task_ids:
        return {"refused": f"run {run.pk} answers none of the campaign's tasks"}
    tasks = {t.pk: t for t in campaign.tasks.filter(pk__in=task_ids)}
    numeric = all(rating_values(question(t.form, t.form["primary"])) is not None for t in tasks.values())
    if not numeric and any(task_kind(t.form) != "multiple_choice" for t in tasks.values()):
        return {"refused": "the planner reads numbers (ratings, scores) or multiple choice against gold"}
    finals = dict(BatchItem.objects.filter(campaign=campaign, status=ItemStatus.LABELLED, item__task_id__in=task_ids)
                  .values_list("item_id", "final_value"))
    answers = {}
    for p in Prediction.objects.filter(run=run, item__task_id__in=task_ids).only("item_id", "variant", "rating",
                                                                                 "answer"):
        if numeric or p.variant == "":  # a rating run's seeds (Huynh's variants) are averaged
            answers.setdefault(p.item_id, []).append(_judge_value(p, numeric))
    judged = {i: (sum(v) / len(v) if numeric else v[0]) for i, v in answers.items() if None not in v}
    if numeric:
        truth = {i: n for i, v in finals.items() if (n := _number(v)) is not None and i in judged}
        proxy = judged
        estimand = "the mean final label"
    else:
        gold = {i: (sg or {}).get(tasks[t].form["primary"]) for i, t, sg in Item.objects.filter(
            pk__in=judged).values_list("id", "task_id", "source_gold")}
        gold = {i: g for i, g in gold.items() if g is not None}
        truth = {i: float(v == gold[i]) for i, v in finals.items() if i in gold and i in judged}
        proxy = {i: float(judged[i] == g) for i, g in gold.items()}
        estimand = "the share of final labels that match the gold"
    labelled = sorted(truth)
    y, f = [truth[i] for i in labelled], [proxy[i] for i in labelled]
    judge_only = [proxy[i] for i in sorted(proxy) if i not in truth]  # a labelled item is never counted twice
    plan = plan_labels(y, f, judge_only, target_width=target_width, confidence=confidence)
    if plan.refused:
        return {"refused": plan.refused, "estimand": estimand}
    now = ppi_mean(y, f, judge_only, confidence=confidence)
    return {"estimand": estimand, "judge": f"{run.model.name} (run {run.pk}, {run.mode})", "now": now.to_dict(),
            "plan": plan.to_dict()}
