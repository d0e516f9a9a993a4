"""May a judge replace these people? The alternative annotator test (Calderon, Reichart and Dror, ACL 2025,
"The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators
with LLMs"), written from the paper.

Each annotator j is left out in turn. On each item i that j and at least one other person labelled, the judge
and j are each scored against the others (ACC: the share of the others they match; -RMSE for ratings). The
judge wins the item when its score is at least j's (W_f = 1), j wins when theirs is at least the judge's (W_h =
1; a tie is a win for both). rho_f and rho_h are the means over j's items. One-sided test per annotator of
H0: rho_f <= rho_h - epsilon against H1: rho_f > rho_h - epsilon: a paired t-test of W_h - W_f against epsilon
with 30 items or more, the Wilcoxon signed-rank test below that. The p-values of all annotators are corrected
with Benjamini-Yekutieli (statsmodels multipletests, 'fdr_by'); the winning rate is the share of annotators
whose H0 is rejected, and the judge passes at 0.5 or more. The advantage probability is the mean rho_f: the
probability that the judge is as good as or better than a randomly chosen annotator.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ._common import Result, is_missing

AnnotatorKind = Literal["crowd", "skilled", "expert"]
# The paper's rule of thumb: what a judge may give away against people who cost more.
EPSILON = {"crowd": 0.1, "skilled": 0.15, "expert": 0.2}
EPSILON_TEXT = {"crowd": "crowd workers: epsilon 0.1", "skilled": "skilled annotators (trained, students): 0.15",
                "expert": "experts (reliable, expensive): 0.2"}
Scoring = Literal["accuracy", "neg_rmse"]
MIN_ITEMS_FOR_T = 30  # fewer items per annotator: the rank test instead (the t-test's normality)
MIN_ANNOTATORS = 3  # the paper recommends three or more people; two work but give no consensus to compare with
PASS_RATE = 0.5


@dataclass(frozen=True)
class AnnotatorComparison(Result):
    annotator: Any
    n_items: int  # items they labelled together with at least one other person (and the judge)
    rho_judge: float | None  # share of those items where the judge is at least as close to the others
    rho_annotator: float | None
    test: str | None  # "t" (paired t-test) or "wilcoxon" (fewer than 30 items)
    p_value: float | None
    p_adjusted: float | None  # Benjamini-Yekutieli over the annotators
    judge_wins: bool  # H0 rejected at alpha after the correction


@dataclass(frozen=True)
class AltTestResult(Result):
    epsilon: float
    annotator_kind: str | None
    scoring: str
    alpha: float
    winning_rate: float | None
    advantage_probability: float | None
    passed: bool | None
    n_annotators: int
    annotators: list  # AnnotatorComparison, by annotator
    n_items: int  # items with two or more people and a judge's answer
    checks: list  # the test's minimums, each {check, met, detail}
    undefined_reason: str | None = None


def _score(prediction, others, scoring):
    if scoring == "accuracy":
        # The share of the others matched: a count over their number, the very float np.mean of the flags gives
        # (an exact integer sum, one division), without an array per call (it runs once per annotator and item).
        return sum(1 for o in others if prediction == o) / len(others)
    return -math.sqrt(float(np.mean([(float(prediction) - float(o)) ** 2 for o in others])))


def _wins(shared, judge, annotators, scoring):
    """annotator -> (W_f, W_h) over the items they share with others, in the order of `shared`."""
    wins = {annotator: ([], []) for annotator in annotators}
    if scoring == "accuracy":
        # Judge and person are scored against the same others: the judge's share of matches is at least the
        # person's exactly when its count of matches is, so the counts are compared (one pass per item; the
        # judge's matches counted once for all of the item's people, less the left-out person's own).
        for item, by in shared.items():
            prediction, values = judge[item], list(by.values())
            judge_matches = [prediction == v for v in values]
            all_judge = sum(judge_matches)
            for k, (annotator, mine) in enumerate(by.items()):
                judge_count = all_judge - judge_matches[k]
                person_count = sum(1 for j, v in enumerate(values) if j != k and mine == v)
                won_judge, won_person = wins[annotator]
                won_judge.append(judge_count >= person_count)
                won_person.append(person_count >= judge_count)
        return wins
    for annotator in annotators:
        won_judge, won_person = wins[annotator]
        for item, by in shared.items():
            if annotator not in by:
                continue
            others = [v for a, v in by.items() if a != annotator]
            judge_score, person_score = _score(judge[item], others, scoring), _score(by[annotator], others, scoring)
            won_judge.append(judge_score >= person_score)
            won_person.append(person_score >= judge_score)
    return wins


def _one_sided_p(difference: np.ndarray, epsilon: float) -> tuple[str, float]:
    """P-value of H0: mean(W_h - W_f) >= epsilon against H1: < epsilon."""
    shifted = difference - epsilon
    if difference.size >= MIN_ITEMS_FOR_T:
        if np.all(shifted == shifted[0]):  # no spread: the t statistic is infinite one way or the other
            return "t", 0.0 if shifted[0] < 0 else 1.0
        return "t", float(stats.ttest_1samp(difference, popmean=epsilon, alternative="less").pvalue)
    if np.all(shifted == 0):
        return "wilcoxon", 1.0
    return "wilcoxon", float(stats.wilcoxon(shifted, alternative="less").pvalue)


def alt_test(human: Mapping[Any, Mapping[Any, Any]], judge: Mapping[Any, Any], *, epsilon: float | None = None,
             annotator_kind: AnnotatorKind | None = None, scoring: Scoring = "accuracy",
             alpha: float = 0.05) -> AltTestResult:
    """`human`: annotator -> {item: label}; `judge`: item -> label. epsilon: given, or the paper's value for
    `annotator_kind`. Items with fewer than two people, or without a judge's answer, are left out."""
    if epsilon is None:
        if annotator_kind not in EPSILON:
            raise ValueError(f"give epsilon or annotator_kind, one of {sorted(EPSILON)}")
        epsilon = EPSILON[annotator_kind]
    if scoring not in ("accuracy", "neg_rmse"):
        raise ValueError("scoring must be 'accuracy' or 'neg_rmse'")
    labels: dict = {}
    for annotator, answers in human.items():
        for item, value in answers.items():
            if not is_missing(value) and item in judge and not is_missing(judge[item]):
                labels.setdefault(item, {})[annotator] = value
    shared = {item: by for item, by in labels.items() if len(by) >= 2}
    annotators = sorted({a for by in shared.values() for a in by}, key=str)
    wins = _wins(shared, judge, annotators, scoring)
    rows, p_values = [], []
    for annotator in annotators:
        won_judge, won_person = wins[annotator]
        w_f, w_h = np.array(won_judge, dtype=float), np.array(won_person, dtype=float)
        test, p = _one_sided_p(w_h - w_f, epsilon)
        rows.append([annotator, w_f.size, float(w_f.mean()), float(w_h.mean()), test, p])
        p_values.append(p)
    checks = [
        {"check": "two or more people per item", "met": bool(shared),
         "detail": f"{len(shared)} of {len(labels)} judged items have two or more people; the others are left out"},
        {"check": f"{MIN_ANNOTATORS} or more annotators", "met": len(annotators) >= MIN_ANNOTATORS,
         "detail": f"{len(annotators)} annotators (with two, each is compared with one other person only)"},
        {"check": f"{MIN_ITEMS_FOR_T} or more items per annotator (t-test)",
         "met": all(r[1] >= MIN_ITEMS_FOR_T for r in rows) if rows else False,
         "detail": ", ".join(f"{r[0]}: {r[1]}" for r in rows if r[1] < MIN_ITEMS_FOR_T)
         and "the Wilcoxon signed-rank test for " + ", ".join(f"{r[0]} ({r[1]} items)" for r in rows
                                                                if r[1] < MIN_ITEMS_FOR_T)
         or "every annotator: paired t-test"},
    ]
    if not rows:
        return AltTestResult(epsilon, annotator_kind, scoring, alpha, None, None, None, 0, [], len(shared), checks,
                             "no item has two or more people and a judge's answer")
    reject, adjusted, _, _ = multipletests(p_values, alpha=alpha, method="fdr_by")
    comparisons = [AnnotatorComparison(a, n, rf, rh, test, p, float(q), bool(r))
                   for (a, n, rf, rh, test, p), q, r in zip(rows, adjusted, reject, strict=True)]
    winning = float(np.mean(reject))
    return AltTestResult(epsilon, annotator_kind, scoring, alpha, winning,
                         float(np.mean([c.rho_judge for c in comparisons])), winning >= PASS_RATE, len(comparisons),
                         comparisons, len(shared), checks)
