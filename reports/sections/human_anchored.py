"""Fewer human labels for the same certainty: the crowd's aggregate beside a typical person, human-anchored
intervals (PPI++) beside the classical ones, and whether a judge may replace the people (the alternative
annotator test)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from django.utils.translation import gettext_noop

from benchmarks.formschema import excluding_values, question, rating_values
from metrics import (
    ALT_TEST_EPSILON,
    alt_test,
    annotator_model,
    as_number,
    disagreement_with_majority,
    majority_label,
    ppi_mean,
    width_curve,
)
from metrics.prediction_powered import (
    COVERAGE_REPETITIONS,
    COVERAGE_SHORTFALL,
    coverage_short,
    simulated_active_coverage,
    simulated_coverage,
)
from modeleval import modes

from ..contract import ReportOptions
from ..figures import new_row, put
from ..readable import flag
from ..rows import Rows
from ..texts import SMALL_SAMPLE_BECAUSE
from .annotators import label_key

MC_MODES = modes.modes_where(section=modes.Section.MULTIPLE_CHOICE)
RATING_MODES = modes.modes_where(section=modes.Section.RATINGS)
# The campaign settings' aggregate rules (annotation.models.Aggregation); majority vote is the default.
MAJORITY = "majority"
AGGREGATION_TEXT = {
    "majority": "majority vote of the item's labels (a tie gives no label and counts as wrong)",
    "dawid_skene": "Dawid-Skene's most probable label, fitted to every label of the campaign's task",
    "one_coin": "one-coin Dawid-Skene's most probable label, fitted to every label of the campaign's task",
    "mace": "MACE's most probable label (as published: crowd-kit's configuration), fitted to every label of the "
            "campaign's task",
}


def _settings(rows: Rows, campaign_id):
    versions = rows.campaigns[campaign_id]["settings"]
    return versions[-1] if versions else {}


def campaign_labels(rows: Rows, task_id):
    """campaign id -> {item: {annotator: primary answer}} on one task from the human campaigns' current labels, the
    excluding answers (-1, -2, abandon) left out. Made once per report and task (three sections read it; none
    changes it)."""
    return rows.shared(("campaign_labels", task_id), lambda: _campaign_labels(rows, task_id))


def _campaign_labels(rows: Rows, task_id):
    ann = rows.data.annotations
    values, items, annotators, campaigns = ann["value"], ann["item_id"], ann["annotator_id"], ann["campaign_id"]
    excluding = {label_key(v) for v in excluding_values(question(rows.tasks[task_id]["form"], rows.primary[task_id]))}
    out = defaultdict(dict)
    for i in rows.human_rows_by_task()[task_id].tolist():
        value = values[i]
        if value is None or label_key(value) in excluding:
            continue
        out[campaigns[i]].setdefault(items[i], {})[annotators[i]] = value
    return dict(out)  # a plain dict: a look-up of a missing key adds nothing


def run_answers(rows: Rows, run_id, column):
    """item -> the run's answer in `column`: the answer as shown (variant ""), or the mean over its variants for a
    numeric column (Huynh's seeds). Made once per report and run (two sections read it; none changes it)."""
    return rows.shared(("run_answers", run_id, column), lambda: _run_answers(rows, run_id, column))


def _run_answers(rows: Rows, run_id, column):
    values = rows.data.predictions[column]
    if column != "rating":
        return {item: values[i] for item, i in rows.predictions[run_id, ""].items() if values[i] not in (None, "")}
    sums = defaultdict(list)
    for (run, _), where in rows.predictions.items():
        if run == run_id:
            for item, i in where.items():
                if values[i] is not None:
                    sums[item].append(values[i])
    return {item: float(np.mean(v)) for item, v in sums.items()}


# ---------------------------------------------------------------- the crowd and a typical person

def crowd_section(rows: Rows, options: ReportOptions):
    """Per campaign and task with gold: the accuracy of a typical person (the mean of the annotators'
    accuracies) and of the aggregated crowd under the campaign's rule, named, with majority vote beside a
    model's figure; each annotator's competence under the model."""
    parts = []
    for task_id in rows.tasks:
        if rows.kind[task_id] != "pairwise":
            parts += rows.per_task("crowd", task_id, lambda task_id=task_id: crowd_rows(rows, task_id, options))
    return [row for _, _, row in sorted(parts, key=lambda part: part[:2])]  # by campaign, then task


def crowd_rows(rows: Rows, task_id, options: ReportOptions):
    """(campaign id, task id, the crowd's row) of each campaign that labelled the task (raters who are people)."""
    return [(campaign_id, task_id, crowd_row(rows, campaign_id, task_id, labels, options))
            for campaign_id, labels in campaign_labels(rows, task_id).items()
            if campaign_id not in rows.position_campaigns]


def crowd_row(rows: Rows, campaign_id, task_id, labels, options: ReportOptions):
    """The crowd's row of one campaign and task."""
    task = rows.tasks[task_id]
    rule = _settings(rows, campaign_id).get("aggregation") or MAJORITY
    gold = {i: label_key(g) for i in labels if (g := rows.gold.get(i)) is not None}
    row = new_row(campaign_id=campaign_id, campaign=rows.campaigns[campaign_id]["name"], task=task["slug"],
                  rule=rule, rule_text=AGGREGATION_TEXT.get(rule, rule), n_items=len(labels), n_gold=len(gold))
    people = defaultdict(lambda: [0, 0])
    for item, g in gold.items():
        for annotator, value in labels[item].items():
            people[annotator][0] += label_key(value) == g
            people[annotator][1] += 1
    accuracies = [right / n for right, n in people.values() if n]
    put(row, "typical_person_accuracy", float(np.mean(accuracies)) if accuracies else None,
        "no labelled item has gold")
    row["n_annotators"] = len(accuracies)
    majority = {i: majority_label([label_key(v) for v in by.values()]) for i, by in labels.items()}
    put(row, "majority_accuracy", float(np.mean([majority[i] == g for i, g in gold.items()])) if gold else None,
        "no labelled item has gold")
    model_method = rule if rule != MAJORITY else "dawid_skene"
    answers = [(i, a, label_key(v)) for i, by in labels.items() for a, v in by.items()]
    model = annotator_model(model_method, answers) if answers else None
    if model is not None:
        aggregate = dict(zip(model.items, model.aggregate, strict=True))
        put(row, f"{model_method}_accuracy",
            float(np.mean([aggregate[i] == g for i, g in gold.items()])) if gold else None,
            "no labelled item has gold")
        row["model"] = model_method
        row["model_iterations"], row["model_converged"] = model.iterations, model.converged
        row["majority_disagreement"] = disagreement_with_majority(model, answers)
        row["annotators"] = [
            {"annotator": rows.data.users.get(a, str(a)), "competence": model.competence[a],
             "gold_accuracy": (people[a][0] / people[a][1]) if people[a][1] else None, "n_gold": people[a][1]}
            for a in sorted(model.annotators, key=lambda a: rows.data.users.get(a, str(a)))]
    crowd = "majority_accuracy" if rule == MAJORITY else f"{rule}_accuracy"
    put(row, "crowd_accuracy", row.get(crowd), "no labelled item has gold")
    flag(row, [(len(gold), options.min_items, "items with gold")] if gold else [])
    return row


# ---------------------------------------------------------------- human-anchored intervals

def _interval_row(result, curve, **keys):
    row = new_row(**keys, n=result.n, N=result.N, lam=result.lam, effective_n=result.effective_n,
                  weighted=result.weighted, method=result.method)
    for name, interval in (("anchored", result.human_anchored), ("classical", result.classical)):
        row[f"{name}_estimate"], row[f"{name}_low"] = interval.estimate, interval.low
        row[f"{name}_high"], row[f"{name}_width"] = interval.high, interval.width
    if result.undefined_reason:
        for key in ("lam", "anchored_estimate", "anchored_low", "anchored_high", "anchored_width", "effective_n"):
            row["undefined"][key] = result.undefined_reason
    for key, value in list(row.items()):
        if isinstance(value, float) and not np.isfinite(value):
            put(row, key, None, "undefined: the labelled items or the judge's answers do not vary")
    row["_curve"] = [p.to_dict() for p in curve]
    return row


def _anchored(labelled, unlabelled, options, inclusion=None, curve=True, **keys):
    """One row from `labelled` [(human figure, judge's stand-in)] and the judge's stand-in on the items nobody
    labelled (`unlabelled`; a labelled item is never among them), flagged from a coverage simulation at its own
    size."""
    y, f = [a for a, _ in labelled], [b for _, b in labelled]
    result = ppi_mean(y, f, unlabelled, confidence=options.confidence, inclusion_probabilities=inclusion)
    points = width_curve(y, f, unlabelled, confidence=options.confidence, seed=options.seed) \
        if curve and inclusion is None else []
    row = _interval_row(result, points, **keys)
    if inclusion is None:
        coverage = simulated_coverage(y, f, len(unlabelled), confidence=options.confidence, seed=options.seed)
    else:
        coverage = simulated_active_coverage(y, f, inclusion, confidence=options.confidence, seed=options.seed)
    row["coverage"], row["classical_coverage"] = coverage.human_anchored, coverage.classical
    if coverage.undefined_reason:
        row["undefined"].update(coverage=coverage.undefined_reason, classical_coverage=coverage.undefined_reason)
    flag(row, [(result.n, options.min_items, "labelled items")])
    short = coverage_short(coverage, options.confidence)
    row["small_sample"] = "; ".join(r for r in (row["small_sample"], short and SMALL_SAMPLE_BECAUSE(why=short))
                                    if r) or None
    return row


def human_values(rows: Rows, task, labels):
    """item -> the people's figure on it: the mean rating (rating tasks), or whether their majority label is the
    gold one (multiple choice), for the items people labelled."""
    if rows.kind[task["id"]] == "rating":
        numbers = {i: [n for v in by.values() if (n := as_number(v)) is not None] for i, by in labels.items()}
        return {i: float(np.mean(v)) for i, v in numbers.items() if v}
    out = {}
    for item, by in labels.items():
        gold = rows.gold.get(item)
        if gold is not None:
            out[item] = float(majority_label([label_key(v) for v in by.values()]) == label_key(gold))
    return out


def inclusion_of(rows: Rows, items):
    """The inclusion probabilities of items drawn by active selection, when every one of them has one."""
    probabilities = rows.data.inclusion or {}
    values = [probabilities.get(i) for i in items]
    return values if values and all(v is not None for v in values) else None


def human_anchored_section(rows: Rows, options: ReportOptions):
    """Per task: the people's figure (mean rating, or majority accuracy against gold) anchored on the items they
    labelled with each judge run's answer on every item; each model's accuracy with gold on the items that have
    it and a judge's verdict on all; the human-versus-model gap on the per-item difference. Each beside the
    classical interval from the labelled items alone."""
    humans, models, gaps = [], [], []
    for task in rows.data.tasks:
        if rows.kind[task["id"]] in ("rating", "multiple_choice"):
            parts = rows.per_task("human_anchored", task["id"], lambda task=task: anchored_task(rows, task, options))
            for out, part in zip((humans, models, gaps), parts, strict=True):
                out += part
    return {"humans": humans, "models": models, "gaps": gaps, "confidence": options.confidence,
            "method": method_text()}


# How the section's intervals are made, in words (stored in English; the report's pages show it in the reader's
# language: reports.render.anchored).
METHOD = gettext_noop(
    "PPI++ (ppi-python's ppi_mean_ci, lambda tuned and clipped to [0, 1]) on the labelled items and, as a separate "
    "sample, the judge's answers on the items nobody labelled (a labelled item is never counted twice; with every item "
    "labelled the interval is the classical one); items drawn by active selection: the design-based estimate (weights "
    "1 / inclusion probability). Beside it the normal interval of the labelled items alone. Each row names its method. "
    "Effective n: the labels a classical interval would need for the human-anchored width. Coverage: the share of "
    "%(repetitions)s campaigns simulated from the row's own labelled items, at its own n and N, whose interval covers; "
    "a row is flagged small sample when either interval's falls more than %(shortfall)s below the level, or when it "
    "rests on fewer labelled items than the report's minimum")


def method_text(translate=lambda text: text):
    """METHOD with its figures, through `translate` (gettext for a reader)."""
    return translate(METHOD) % {"repetitions": COVERAGE_REPETITIONS, "shortfall": COVERAGE_SHORTFALL}


def people_figures(rows: Rows, task):
    """(item -> the people's figure, item -> gold) of one task, over the campaigns' current labels; made once per
    report and task (the section and the planner read it; none changes it)."""
    def make():
        labels = {}  # item -> {annotator: answer}, over the campaigns
        for by_item in campaign_labels(rows, task["id"]).values():
            for item, by in by_item.items():
                labels.setdefault(item, {}).update(by)
        gold = {i: g for i in rows.items_of[task["id"]] if (g := rows.gold.get(i)) is not None}
        return human_values(rows, task, labels), gold

    return rows.shared(("people_figures", task["id"]), make)


def people_inputs(rows: Rows, task, judge_id):
    """What the people's human-anchored row of one task rests on with one judge run: {estimand, labelled: [(the
    people's figure, the judge's stand-in)], judge_only: the stand-in on the items nobody labelled, inclusion: the
    labelled items' inclusion probabilities under active selection or None}; None when no item is labelled. The
    report's row and the campaign planner both read it, so that they estimate the same figure the same way."""
    kind = rows.kind[task["id"]]
    if kind not in ("rating", "multiple_choice"):
        return None
    human, gold = people_figures(rows, task)
    j = run_answers(rows, judge_id, "rating" if kind == "rating" else "answer")
    if kind == "rating":  # the judge's rating stands in for the people's mean
        stand_in, estimand = {i: float(j[i]) for i in rows.items_of[task["id"]] if i in j}, "mean human rating"
    else:  # the judge being right stands in for the people's majority being right
        stand_in = {i: float(j[i] == gold[i]) for i in rows.items_of[task["id"]] if i in j and i in gold}
        estimand = "human majority accuracy"
    labelled = [i for i in stand_in if i in human]
    if not labelled:
        return None
    return {"estimand": estimand, "labelled": [(human[i], stand_in[i]) for i in labelled],
            "judge_only": [v for i, v in stand_in.items() if i not in human], "inclusion": inclusion_of(rows, labelled)}


def anchored_task(rows: Rows, task, options: ReportOptions):
    """The human-anchored section's (humans, models, gaps) rows of one rating or multiple-choice task."""
    kind = rows.kind[task["id"]]
    if kind == "rating":
        judges = rows.runs_for(task["id"], RATING_MODES)
        column = "rating"
    elif kind == "multiple_choice":
        judges = rows.runs_for(task["id"], MC_MODES)
        column = "answer"
    else:
        return [], [], []
    humans, models, gaps = [], [], []
    items = rows.items_of[task["id"]]
    human, gold = people_figures(rows, task)
    answers = {r["id"]: run_answers(rows, r["id"], column) for r in judges}
    for judge in judges:
        j = answers[judge["id"]]
        judged = [i for i in items if i in j]
        # For labels the judge's answer stands in for gold: is it the people's majority's "right"?
        proxy = {i: float(j[i]) for i in judged} if kind == "rating" else {}
        keys = dict(task=task["slug"], judge=rows.run_label[judge["id"]], judge_run_id=judge["id"])
        people = people_inputs(rows, task, judge["id"])
        if people:
            humans.append(_anchored(people["labelled"], people["judge_only"], options, people["inclusion"],
                                    curve=True, estimand=people["estimand"], **keys))
        for model in judges:
            if model["id"] == judge["id"]:
                continue
            m = answers[model["id"]]
            both = [i for i in judged if i in m]
            model_keys = dict(keys, model=rows.run_label[model["id"]], model_run_id=model["id"])
            if kind == "multiple_choice":
                with_gold = [i for i in both if i in gold]
                if with_gold:
                    models.append(_anchored(
                        [(float(m[i] == gold[i]), float(m[i] == j[i])) for i in with_gold],
                        [float(m[i] == j[i]) for i in both if i not in gold], options, curve=False,
                        estimand="model accuracy", **model_keys))
                # the gap: people right minus model right; the judge being right stands in for the people
                # where they gave no label
                gap_items = [i for i in with_gold if i in human]
                if gap_items:
                    correct = {i: float(m[i] == gold[i]) for i in with_gold}
                    gaps.append(_anchored(
                        [(human[i] - correct[i], float(j[i] == gold[i]) - correct[i]) for i in gap_items],
                        [float(j[i] == gold[i]) - correct[i] for i in with_gold if i not in human], options,
                        curve=False, estimand="human minus model accuracy", **model_keys))
            else:
                gap_items = [i for i in both if i in human]
                if gap_items:
                    gaps.append(_anchored(
                        [(human[i] - m[i], proxy[i] - m[i]) for i in gap_items],
                        [proxy[i] - m[i] for i in both if i not in human], options, curve=False,
                        estimand="human minus model rating", **model_keys))
    return humans, models, gaps


# ---------------------------------------------------------------- may this judge replace these people?

def alt_test_section(rows: Rows, options: ReportOptions):
    """Per campaign, task and judge run: the alternative annotator test with the epsilon of the campaign's
    annotators (their `annotator_kind`), accuracy for labels and -RMSE for ratings."""
    parts = []
    for task_id in rows.tasks:
        if rows.kind[task_id] in ("rating", "multiple_choice"):
            parts += rows.per_task("alt_test", task_id, lambda task_id=task_id: [
                (campaign_id, task_id, alt_test_rows(rows, campaign_id, task_id, labels, options))
                for campaign_id, labels in campaign_labels(rows, task_id).items()])
    # by campaign, then task
    return {"tests": [row for _, _, out in sorted(parts, key=lambda part: part[:2]) for row in out],
            "epsilon": ALT_TEST_EPSILON}


def alt_test_rows(rows: Rows, campaign_id, task_id, labels, options: ReportOptions):
    """The alternative annotator test's rows of one campaign and task, one per judge run."""
    out = []
    task, kind = rows.tasks[task_id], rows.kind[task_id]
    annotator_kind = _settings(rows, campaign_id).get("annotator_kind") or "skilled"
    human = defaultdict(dict)
    for item, by in labels.items():
        for annotator, value in by.items():
            human[annotator][item] = as_number(value) if kind == "rating" else label_key(value)
    spec = question(task["form"], task["form"]["primary"])
    for judge in rows.runs_for(task_id, RATING_MODES if kind == "rating" else MC_MODES):
        answers = run_answers(rows, judge["id"], "rating" if kind == "rating" else "answer")
        if kind == "rating" and rating_values(spec) is None:
            continue
        result = alt_test(human, answers, annotator_kind=annotator_kind,
                          scoring="neg_rmse" if kind == "rating" else "accuracy",
                          alpha=round(1 - options.confidence, 10))
        row = new_row(campaign_id=campaign_id, campaign=rows.campaigns[campaign_id]["name"], task=task["slug"],
                      judge=rows.run_label[judge["id"]], judge_run_id=judge["id"], annotator_kind=annotator_kind,
                      epsilon=result.epsilon, scoring=result.scoring, alpha=result.alpha,
                      n_items=result.n_items, n_annotators=result.n_annotators,
                      raters_are_positions=campaign_id in rows.position_campaigns)
        put(row, "winning_rate", result.winning_rate, result.undefined_reason)
        put(row, "advantage_probability", result.advantage_probability, result.undefined_reason)
        put(row, "passed", result.passed, result.undefined_reason)
        row["checks"] = result.checks
        row["per_annotator"] = [{**c.to_dict(), "annotator": rows.data.users.get(c.annotator, str(c.annotator))}
                                for c in result.annotators]
        out.append(row)
    return out
