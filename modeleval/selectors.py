"""Reads shared by the API, the admin, the score command and reports.

Figures are recomputed from the stored per-option numbers, not from the stored picks, so that a
report can show that the rows alone give the run's accuracy.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable

from django.db.models import Count, Q, Sum

import studies
from modeleval.scorers.choice_rules import rule_picks
from studies.vocabulary import Rule

from . import modes as registry
from .models import ChunkState, EvalRun, Mode, ParseStatus, Prediction, RunState
from .modes import Answer, mode_unsuited
from .scorers.positions import accuracy_by_position


def run_labels(runs: Iterable[tuple[int, str, str]]) -> dict[int, str]:
    """The name each run is shown under, from its (id, model name, mode): the model's name, with `#` and the run id
    when that model ran more than once in that mode, so that a name is unique among runs of one mode (the arena's
    runs are all self-chat; a report's tables are by mode)."""
    runs = list(runs)
    counts = Counter((name, mode) for _, name, mode in runs)
    return {pk: name if counts[name, mode] == 1 else f"{name}#{pk}" for pk, name, mode in runs}


def run_choice(run: EvalRun) -> str:
    """A run as an entry of a list to pick one from: its model, mode and id."""
    return f"{run.model.name} · {run.mode} · run {run.pk}"


def runs():
    return (EvalRun.objects.select_related("model", "benchmark", "created_by").prefetch_related("tasks")
            .annotate(chunks_running=Count("chunks", filter=Q(chunks__state=ChunkState.RUNNING)),
                      items_scoring=Sum("chunks__items_scored", filter=Q(chunks__state=ChunkState.RUNNING)))
            # Newest first: an aggregate query is not ordered by the model's Meta.ordering.
            .order_by("-created_at", "-id"))


def predictions(run_id=None):
    rows = Prediction.objects.select_related("item", "item__task")
    return rows.filter(run_id=run_id) if run_id is not None else rows


def mc_picks(options) -> dict[str, str]:
    """The option key each rule (scorers.loglikelihood.rule_picks) picks from a prediction's stored options."""
    picks = rule_picks([o["logprob"] for o in options], [o.get("n_tokens") for o in options],
                       [o["n_chars"] for o in options])
    return {rule: options[index]["key"] for rule, index in picks.items()}


def run_summary(run: EvalRun) -> dict:
    """Per task and overall (unweighted mean of tasks, as DialogBench): accuracy of the run's
    answers (unparsable counted wrong, and counted), the three log-likelihood rules recomputed from
    the options, accuracy by gold position for position variants, mean rating for rating modes."""
    reading = registry.reads(run.mode)
    by_task = defaultdict(list)
    for p in predictions(run.pk).order_by("item__task__slug", "item_id", "variant"):
        by_task[p.item.task.slug].append(p)
    tasks = {}
    for slug, rows in by_task.items():
        graded = [p for p in rows if p.gold]
        figures = {"predictions": len(rows), "with_gold": len(graded),
                   "unparsable": sum(p.parse_status == ParseStatus.UNPARSABLE for p in rows)}
        if graded and reading.answer != Answer.RATING:
            figures["accuracy"] = sum(p.answer == p.gold for p in graded) / len(graded)
        extracted = [(p.probabilities["extraction"].get("hard"), p.gold) for p in graded
                     if "extraction" in (p.probabilities or {})]
        if extracted:
            # DialogBench reports both: `accuracy` from its easy extraction, this from the hard one.
            figures["accuracy_hard"] = sum(hard == gold for hard, gold in extracted) / len(extracted)
        if graded and reading.by_rule:
            picks = [(mc_picks(p.options), p.gold) for p in graded]
            for rule in Rule:
                if all(rule in pick for pick, _ in picks):  # per_token: not where token counts are unknown
                    figures[rule] = sum(pick[rule] == gold for pick, gold in picks) / len(picks)
        if any(p.variant for p in graded):
            positions = accuracy_by_position((p.gold, p.answer or None) for p in graded)
            figures["by_position"] = {pos: {"correct": a.correct, "total": a.total, "accuracy": a.accuracy}
                                      for pos, a in positions.items()}
        ratings = [p.rating for p in rows if p.rating is not None]
        if ratings:
            figures["mean_rating"] = sum(ratings) / len(ratings)
        tasks[slug] = figures
    scored = [t["accuracy"] for t in tasks.values() if "accuracy" in t]
    summary = {"run": run.pk, "state": run.state, "mode": run.mode, "tasks": tasks,
               "overall_accuracy": sum(scored) / len(scored) if scored else None}
    if hard := [t["accuracy_hard"] for t in tasks.values() if "accuracy_hard" in t]:
        summary["overall_accuracy_hard"] = sum(hard) / len(hard)
    return summary


def run_modes(benchmark) -> list[dict]:
    """Each run mode with whether it can score every task of the benchmark (a run without a task list
    takes them all) and, when not, why: the rule is `modes.mode_unsuited`, the one `start_run` applies."""
    tasks = list(benchmark.tasks.order_by("slug"))
    modes = []
    for mode, label in Mode.choices:
        # A plan without a model is a prompted model's: the runs page offers those (classify: a classifier's).
        plan = registry.plan(mode)
        if plan.refusal:
            reasons = [plan.refusal]
        elif not tasks:
            reasons = [f"benchmark {benchmark.slug} has no tasks"]
        else:
            reasons = [reason for task in tasks if (reason := mode_unsuited(task, mode))]
        modes.append({"mode": mode, "label": label, "available": not reasons, "reasons": reasons,
                      "presets": studies.presets_for(mode), "writes": plan.writes and plan.writes.value})
    return modes


def api_usage(run) -> dict:
    """Requests and tokens of a run on a model behind an API: those answered by the endpoint (paid) and
    those answered from the response cache, from the calls stored on its predictions."""
    figures = {"requests": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0,
               "cached_prompt_tokens": 0, "cached_completion_tokens": 0}
    seen = set()
    for calls in Prediction.objects.filter(run=run).values_list("api_calls", flat=True):
        for call in calls or []:
            if call["cache_key"] in seen:  # one request shared by several rows (pairwise twins) is paid once
                continue
            seen.add(call["cache_key"])
            prefix = "cached_" if call.get("cached") else ""
            figures["cached" if call.get("cached") else "requests"] += 1
            for name in ("prompt_tokens", "completion_tokens"):
                figures[prefix + name] += (call.get("usage") or {}).get(name, 0)
    return figures


def _spread(weights: dict, scale: list) -> float | None:
    """The standard deviation of a distribution over numeric ratings, over half the range of the `scale` (0 to 1)."""
    values = {float(k): float(p) for k, p in weights.items()}
    total, half = sum(values.values()), (max(scale) - min(scale)) / 2 if scale else 0
    if total <= 0:
        return None
    mean = sum(k * p for k, p in values.items()) / total
    sd = math.sqrt(sum(p * (k - mean) ** 2 for k, p in values.items()) / total)
    return min(sd / half, 1.0) if half else 0.0


def prediction_uncertainty(prediction) -> float | None:
    """How unsure a judge was of an item, 0 (sure) to 1, from what its prediction stored: the spread of a rating
    run's renormalised rating probabilities (their standard deviation over half the valid ratings' range),
    2 sqrt(g (1 - g)) of a yes/no run's g, 1 - the largest option probability of a log-likelihood run; None where
    nothing tells (generation)."""
    probabilities = prediction.probabilities or {}
    reading = registry.reads(prediction.run.mode)
    if reading.answer == Answer.RATING and probabilities.get("top"):
        return _spread(probabilities["top"], [float(k) for k in probabilities.get("raw") or probabilities["top"]])
    if reading.answer == Answer.PROBABILITY and prediction.rating is not None:
        g = prediction.rating
        return 2 * math.sqrt(g * (1 - g))
    if reading.by_rule and prediction.options:
        logprobs = [o["logprob"] for o in prediction.options]
        weights = [math.exp(lp - max(logprobs)) for lp in logprobs]
        return 1 - max(weights) / sum(weights)
    return None


# The modes prediction_uncertainty reads: rating probabilities, p(yes), option log-likelihoods.
UNCERTAINTY_MODES = (*registry.modes_where(answer=Answer.RATING), *registry.modes_where(answer=Answer.PROBABILITY),
                     *registry.modes_where(by_rule=True))


def uncertainty_runs(benchmark):
    """Finished runs on a benchmark whose predictions tell how unsure the judge was (active selection's judges)."""
    return (EvalRun.objects.filter(benchmark=benchmark, state=RunState.FINISHED, mode__in=UNCERTAINTY_MODES)
            .select_related("model").order_by("-id"))


def item_uncertainty(run_id, item_ids) -> dict:
    """item id -> the judge run's uncertainty about it (prediction_uncertainty; the mean over a run's variants),
    for the items it has a reading for."""
    readings = defaultdict(list)
    for prediction in (Prediction.objects.filter(run_id=run_id, item_id__in=list(item_ids)).select_related("run")
                       .only("item_id", "probabilities", "rating", "options", "run__mode")):
        if (u := prediction_uncertainty(prediction)) is not None:
            readings[prediction.item_id].append(u)
    return {item: sum(values) / len(values) for item, values in readings.items()}
