"""A judge's card: how far it agrees with the people, how many human labels it saves under PPI++, and whether it
reads the two orders of a pair alike.

Savings: PPI++ (`ppi_mean`) estimates a mean from the n labelled items with the judge's answers on them and on
the N items nobody labelled (a labelled item is never counted among the judge-only ones); its interval is as wide
as a classical one from `effective_n` labels, so that the judge saves 1 - n / effective_n of
the labels (realised). From a pilot, with many judge-only items, PPI++'s variance is (1 - rho^2) times the
classical one (rho: the correlation of the people's figure and the judge's stand-in on the labelled items): the
judge is expected to save rho^2 of the labels, a factor 1 / (1 - rho^2); with N judge-only items beside the n
labelled ones, rho^2 N / (n + N) (PPI++'s variance at its tuned lambda). When the judge is no more accurate than
the model it judges, no such estimate can gain more than a factor of two in sample size (Dorner, Nastl and Hardt,
"Limits to scalable evaluation at the frontier: LLM as judge won't beat twice the data", ICLR 2025): the card
then claims at most that factor (half the labels saved), and says so.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._common import Result, check_confidence, is_missing, percentile_interval, plain
from .bootstrap import resample_indices
from .comparison import accuracy_with_wilson
from .prediction_powered import ppi_mean

NO_BETTER_FACTOR = 2.0  # the most a judge no better than the judged model can multiply the sample size by
NO_BETTER_TEXT = ("the judge is no more accurate than the model judged: at most a factor of 2 in labels (half of "
                  "them saved) is claimed (Dorner, Nastl and Hardt, ICLR 2025)")


@dataclass(frozen=True)
class JudgeAgreement(Result):
    statistic: str  # "cohen_kappa" (labels) or "spearman" (ratings)
    value: float | None
    low: float | None  # percentile bootstrap over items
    high: float | None
    n: int
    confidence: float
    undefined_reason: str | None = None


def _kappas(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """Cohen's kappa of each row pair of integer codes (resamples x items), from the rows' confusion counts."""
    rows, n = a.shape
    cells = np.bincount((np.arange(rows)[:, None] * k * k + a * k + b).ravel(), minlength=rows * k * k)
    table = cells.reshape(rows, k, k) / n
    observed = np.trace(table, axis1=1, axis2=2)
    chance = (table.sum(axis=2) * table.sum(axis=1)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - chance) / (1 - chance)
    return np.where(chance < 1, kappa, np.nan)


def _spearmans(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair (resamples x items): Pearson's r of the rows' average ranks."""
    rx, ry = (stats.rankdata(v, axis=1) for v in (x, y))
    rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))
    return np.where(np.isfinite(rho), rho, np.nan)


def judge_agreement(people: Sequence[Any], judge: Sequence[Any], *, ratings: bool, confidence: float = 0.95,
                    n_resamples: int = 1000, seed: int | None = 0) -> JudgeAgreement:
    """The judge against the people's figure per item (their majority label, or their mean rating): Cohen's
    kappa for labels, Spearman's rho for ratings, each with a percentile bootstrap interval over items (the
    resamples `bootstrap_ci` draws, computed for all of them at once; a resample where the figure is undefined
    is left out)."""
    check_confidence(confidence)
    pairs = [(p, j) for p, j in zip(people, judge, strict=True) if not (is_missing(p) or is_missing(j))]
    name = "spearman" if ratings else "cohen_kappa"
    if len(pairs) < (3 if ratings else 1):
        return JudgeAgreement(name, None, None, None, len(pairs), confidence,
                              "fewer than 3 items with both the people's and the judge's answer" if ratings
                              else "no item has both the people's and the judge's answer")
    if ratings:
        x, y = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
        statistic = _spearmans
    else:
        codes = {label: n for n, label in enumerate(dict.fromkeys(plain(v) for pair in pairs for v in pair))}
        x, y = (np.array([codes[plain(v)] for v in side]) for side in zip(*pairs, strict=True))

        def statistic(a, b):
            return _kappas(a, b, len(codes))
    estimate = float(statistic(x[None, :], y[None, :])[0])
    if not np.isfinite(estimate):
        return JudgeAgreement(name, None, None, None, len(pairs), confidence,
                              "undefined: a side does not vary" if ratings else "undefined: chance agreement is 1")
    index = np.stack(list(resample_indices(len(pairs), n_resamples, seed)))
    values = statistic(x[index], y[index])
    low, high = percentile_interval(values[np.isfinite(values)], confidence)
    return JudgeAgreement(name, estimate, low, high, len(pairs), confidence)


@dataclass(frozen=True)
class LabelSavings(Result):
    estimand: str
    n: int  # labelled items (with the judge's answer)
    N: int  # judge-only items (judged, not labelled)
    realised_factor: float | None  # effective_n / n, as claimed (capped where the judge is no better)
    realised_saved: float | None  # 1 - n / effective_n, as claimed
    rho_squared: float | None  # the pilot's squared correlation of the people's figure and the judge's stand-in
    expected_factor: float | None  # 1 / (1 - rho^2), as claimed
    expected_saved: float | None  # rho^2, as claimed
    expected_saved_here: float | None  # rho^2 N / (n + N): the same with only these N judged items, as claimed
    uncapped_realised_factor: float | None
    uncapped_expected_factor: float | None
    capped: bool  # the judge is no better than the model judged: claims held at a factor of 2
    cap_reason: str | None
    judge_accuracy: float | None
    model_accuracy: float | None
    undefined_reason: str | None = None


def label_savings(truth: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float], *,
                  estimand: str, confidence: float = 0.95, judge_accuracy: float | None = None,
                  model_accuracy: float | None = None) -> LabelSavings:
    """The human labels a judge saves on one estimand (see the module's text): `truth` and `judge_labelled` on the
    labelled items, `judge_unlabelled` on the items nobody labelled. `judge_accuracy` and
    `model_accuracy` (against gold, on the same items) say whether the judge is better than the model judged;
    where it is not, the claims are held at a factor of two."""
    result = ppi_mean(truth, judge_labelled, judge_unlabelled, confidence=confidence)
    y, f = np.asarray(truth, dtype=float), np.asarray(judge_labelled, dtype=float)
    rho2 = None
    if y.size >= 3 and y.std() > 0 and f.std() > 0:
        rho2 = float(np.corrcoef(y, f)[0, 1] ** 2)
    realised = result.effective_n / result.n if result.effective_n is not None and result.n else None
    expected = 1 / (1 - rho2) if rho2 is not None and rho2 < 1 else (float("inf") if rho2 == 1 else None)
    capped = judge_accuracy is not None and model_accuracy is not None and judge_accuracy <= model_accuracy
    limit = NO_BETTER_FACTOR if capped else float("inf")
    claim_realised = None if realised is None else min(realised, limit)
    claim_expected = None if expected is None else min(expected, limit)

    def saved(factor):
        return None if factor is None or not np.isfinite(factor) else max(0.0, 1 - 1 / factor)

    reason = result.undefined_reason
    if reason is None and realised is None:
        reason = "undefined: the labelled items or the judge's answers do not vary"
    # ppi_mean's N counts every judged item; the card counts the judge-only ones apart from the n labelled.
    judge_only = len(judge_unlabelled)
    return LabelSavings(estimand, result.n, judge_only, claim_realised, saved(claim_realised), rho2,
                        None if claim_expected is None or not np.isfinite(claim_expected) else claim_expected,
                        (min(rho2, 1 - 1 / limit) if rho2 is not None else None),
                        (min(rho2 * judge_only / (result.n + judge_only), 1 - 1 / limit) if rho2 is not None
                         else None),
                        realised, None if expected is None or not np.isfinite(expected) else expected,
                        capped, NO_BETTER_TEXT if capped else None, judge_accuracy, model_accuracy, reason)


@dataclass(frozen=True)
class SwapConsistency(Result):
    consistency: float | None  # share of pairs read alike in both orders of showing
    low: float | None  # Wilson interval
    high: float | None
    n_pairs: int
    n_consistent: int


def swap_consistency(verdicts: Sequence[tuple[Any, Any]], confidence: float = 0.95) -> SwapConsistency:
    """`verdicts`: per pair, the judge's verdict on the same conversation when it was shown first and when it
    was shown second (None where unread: left out). The share read alike, with its Wilson interval."""
    flags = [a == b for a, b in verdicts if a is not None and b is not None]
    if not flags:
        return SwapConsistency(None, None, None, 0, 0)
    share = accuracy_with_wilson(flags, confidence)
    return SwapConsistency(share.accuracy, share.low, share.high, len(flags), int(sum(flags)))
