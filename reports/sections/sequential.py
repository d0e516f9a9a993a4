"""The human-versus-model gap while labels still arrive: per campaign, task, judge run and model run, confidence
sequences (valid at every look) beside the fixed-n intervals (valid only at a number of labels set in advance),
and the verdict: separated, equivalent within the reader's margin, or about how many more labels.

The report's rows do not keep the order in which the labels arrived, so the labelled items are taken in an order
seeded by the report's seed; the sequence's figures now do not depend on that order beyond the lambda (PPI++)
each label was weighted with and the running intersection (betting)."""
from __future__ import annotations

import numpy as np

from benchmarks.formschema import question, rating_values
from metrics import as_number, ppi_mean
from metrics.sequential import (
    asymptotic_sequence,
    betting_sequence,
    gap_verdict,
    more_items_or_raters,
)

from ..contract import ReportOptions
from ..figures import new_row
from ..readable import flag
from ..rows import Rows
from .annotators import label_key
from .human_anchored import MC_MODES, RATING_MODES, campaign_labels, human_values, inclusion_of, run_answers

# Where the asymptotic sequences are narrowest: the campaign's items, within these bounds (fixed before any label).
T_OPT_BOUNDS = (30, 500)
PATH_POINTS = 30
# The betting sequence's cost grows with labels times candidates: left out above this many labels.
BETTING_MAX_LABELS = 10_000
BETTING_GRID = 401  # candidate means across the answers' range (the ends widened by one step)
METHOD = ("Confidence sequences: the asymptotic sequence of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas (2024; "
          "normal-mixture boundary of Howard et al. 2021, narrowest at t_opt labels) for the classical mean, PPI++ "
          "(lambda from the labels before each one) and active draws (Hajek, weights 1 / inclusion probability); the "
          "hedged betting sequence of Waudby-Smith and Ramdas (2024), without replacement from the N items, for "
          "answers in a known range. Each holds at every number of labels at once. The fixed-n intervals beside "
          "them hold only at a number of labels fixed in advance.")


def sequential_section(rows: Rows, options: ReportOptions):
    """{"gaps": rows, "confidence", "margin", "method"}: one row per campaign, task, judge and model."""
    parts = []
    for task in rows.data.tasks:
        if rows.kind[task["id"]] in ("rating", "multiple_choice"):
            parts += rows.per_task("sequential", task["id"], lambda task=task: task_rows(rows, task, options))
    gaps = [row for _, _, row in sorted(parts, key=lambda part: part[:2])]
    for row in gaps:
        flag(row, [(row["n"], options.min_items, "labelled items")])
    return {"gaps": gaps, "confidence": options.confidence, "margin": options.equivalence_margin,
            "method": METHOD}


def task_rows(rows: Rows, task, options: ReportOptions):
    """(campaign id, task id, row) of each people's campaign on a rating or multiple-choice task."""
    out = []
    kind = rows.kind[task["id"]]
    judges = rows.runs_for(task["id"], RATING_MODES if kind == "rating" else MC_MODES)
    column = "rating" if kind == "rating" else "answer"
    answers = {r["id"]: run_answers(rows, r["id"], column) for r in judges}
    if kind == "rating":
        scale = [float(v) for v in rating_values(question(task["form"], task["form"]["primary"])) or []]
        bounds = (min(scale) - max(scale), max(scale) - min(scale)) if scale else None
    else:
        bounds = (-1.0, 1.0)
    for campaign_id, labels in campaign_labels(rows, task["id"]).items():
        if campaign_id in rows.position_campaigns:
            continue
        human = human_values(rows, task, labels)
        for judge in judges:
            for model in judges:
                if model["id"] != judge["id"]:
                    gap = gap_arrays(rows, task, kind, labels, human, answers[judge["id"]], answers[model["id"]],
                                     options.seed)
                    if gap is not None:
                        keys = dict(campaign_id=campaign_id, campaign=rows.campaigns[campaign_id]["name"],
                                    task=task["slug"], judge=rows.run_label[judge["id"]], judge_run_id=judge["id"],
                                    model=rows.run_label[model["id"]], model_run_id=model["id"])
                        out.append((campaign_id, task["id"], gap_row(rows, gap, bounds, options, **keys)))
    return out


def gap_arrays(rows: Rows, task, kind, labels, human, judge, model, seed):
    """The gap's per-item figures (people minus model) in the seeded order, the judge's stand-in on them and on
    every item, each item's raters' own figures, or None when no item has both."""
    gold = rows.gold
    if kind == "rating":
        pool = [i for i in rows.items_of[task["id"]] if i in judge and i in model]

        def own(i, value):  # one rater's figure on the item
            number = as_number(value)
            return None if number is None else number - model[i]

        model_part = {i: model[i] for i in pool}
        stand_in = {i: judge[i] - model[i] for i in pool}
    else:
        pool = [i for i in rows.items_of[task["id"]] if i in judge and i in model and gold.get(i) is not None]
        model_part = {i: float(model[i] == gold[i]) for i in pool}

        def own(i, value):
            return float(label_key(value) == label_key(gold[i])) - model_part[i]

        stand_in = {i: float(judge[i] == gold[i]) - model_part[i] for i in pool}
    labelled = [i for i in pool if i in human]
    if not labelled:
        return None
    order = [labelled[k] for k in np.random.default_rng(seed).permutation(len(labelled))]
    raters = [[v for value in labels[i].values() if (v := own(i, value)) is not None] for i in order]
    return {"estimand": "human minus model rating" if kind == "rating" else "human minus model accuracy",
            "y": np.array([human[i] - model_part[i] for i in order]), "f": np.array([stand_in[i] for i in order]),
            "f_all": np.array([stand_in[i] for i in pool]), "inclusion": inclusion_of(rows, order),
            "raters": raters}


def _sequence_cells(row, name, path):
    for key in ("estimate", "low", "high", "width"):
        row[f"{name}_{key}"] = getattr(path, key)
        if getattr(path, key) is None:
            row["undefined"][f"{name}_{key}"] = path.undefined_reason or "fewer than 2 labels"


def gap_row(rows: Rows, gap, bounds, options: ReportOptions, **keys):
    y, f, f_all, inclusion = gap["y"], gap["f"], gap["f_all"], gap["inclusion"]
    n, N = y.size, f_all.size
    confidence, margin = options.confidence, options.equivalence_margin
    t_opt = int(min(max(N, T_OPT_BOUNDS[0]), T_OPT_BOUNDS[1]))
    row = new_row(**keys, estimand=gap["estimand"], n=n, N=N, confidence=confidence, margin=margin, t_opt=t_opt,
                  weighted=inclusion is not None)
    fixed = ppi_mean(y, f, f_all, confidence=confidence,
                     inclusion_probabilities=inclusion)
    for name, interval in (("fixed_classical", fixed.classical), ("fixed_anchored", fixed.human_anchored)):
        row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
        if interval.low is None:
            row["undefined"][f"{name}_low"] = row["undefined"][f"{name}_high"] = "fewer than 2 labelled items"
    classical = asymptotic_sequence(y, confidence=confidence, t_opt=t_opt)
    anchored = asymptotic_sequence(y, f, f_all, confidence=confidence, t_opt=t_opt)
    _sequence_cells(row, "cs_classical", classical)
    _sequence_cells(row, "cs_anchored", anchored)
    row["cs_anchored_lam"] = anchored.lam
    lead, weight_mean = anchored, 1.0
    if inclusion is not None:
        weights = 1 / np.asarray(inclusion, dtype=float)
        lead, weight_mean = asymptotic_sequence(y, f, f_all, confidence=confidence, weights=weights,
                                                t_opt=t_opt), float(weights.mean())
        _sequence_cells(row, "cs_active", lead)
    if bounds is not None and y.min() >= bounds[0] and y.max() <= bounds[1] and inclusion is None \
            and n <= BETTING_MAX_LABELS:
        betting = betting_sequence(y, confidence=confidence, lower=bounds[0], upper=bounds[1], population=N,
                                   grid_points=BETTING_GRID)
        _sequence_cells(row, "cs_betting", betting)
        row["betting_verdict"] = gap_verdict(betting, margin=margin, available=N - n).verdict
    else:
        for key in ("estimate", "low", "high", "width"):
            row[f"cs_betting_{key}"] = None
            row["undefined"][f"cs_betting_{key}"] = (
                "items drawn with unequal probabilities" if inclusion is not None
                else f"more than {BETTING_MAX_LABELS} labels: left out for its cost" if n > BETTING_MAX_LABELS
                else "the answers' range is not known")
        row["betting_verdict"] = None
    row["lead"] = lead.estimator
    verdict = gap_verdict(lead, margin=margin, available=N - n, weight_mean=weight_mean)
    row["verdict"], row["more_labels"], row["reaches"] = verdict.verdict, verdict.more_labels, verdict.reaches
    if verdict.verdict == "continue" and verdict.more_labels is None:
        row["undefined"]["more_labels"] = f"no number of labels up to all {N} items reaches a verdict at this spread"
    advice = more_items_or_raters(gap["raters"], items_left=N - n)
    row["next_labels"], row["items_to_raters"] = advice.advice, advice.ratio
    row["path"] = lead.points(PATH_POINTS)
    return row
