"""Human-anchored intervals: prediction-powered inference (PPI++, Angelopoulos, Duchi and Zrnic 2023) with
`ppi-python`, beside the classical interval from the human-labelled items alone.

A mean over every item (a model's accuracy, the mean human rating, the human-versus-model gap) is estimated
from the n items people labelled (`truth`) and a judge's stand-in for the same quantity on those items
(`judge_labelled`) and on all N items (`judge_all`). PPI++ tunes lambda from the data: lambda 0 is the
classical interval, lambda 1 plain PPI. The confidence level is always passed to ppi-python (whose default
is 90%). Items drawn for labelling with known probabilities (active selection) get a design-based estimate
instead (active inference in survey sampling's ratio form, `active_mean`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ._common import Result, check_confidence


@dataclass(frozen=True)
class MeanInterval(Result):
    estimate: float | None
    low: float | None
    high: float | None
    width: float | None


@dataclass(frozen=True)
class HumanAnchored(Result):
    confidence: float
    n: int  # items with a human answer (and a judge's)
    N: int  # items with a judge's answer
    lam: float | None  # PPI++ power tuning: 0 = classical, 1 = plain PPI
    human_anchored: MeanInterval
    classical: MeanInterval  # from the n labelled items alone (normal interval)
    effective_n: float | None  # human labels a classical interval would need for the human-anchored width
    weighted: bool  # labelled items weighted by 1 / inclusion probability
    undefined_reason: str | None = None


def _as_array(values, name):
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds missing or infinite values")
    return array


def classical_mean(values: Sequence[float], confidence: float) -> MeanInterval:
    """The mean with its normal (CLT) interval, standard deviation with ddof 0: ppi-python's lambda = 0 case."""
    check_confidence(confidence)
    y = _as_array(values, "values")
    if y.size < 2:
        return MeanInterval(float(y.mean()) if y.size else None, None, None, None)
    estimate, se = y.mean(), y.std() / math.sqrt(y.size)
    half = norm.ppf(0.5 + confidence / 2) * se
    return MeanInterval(float(estimate), float(estimate - half), float(estimate + half), float(2 * half))


def ppi_mean(truth: Sequence[float], judge_labelled: Sequence[float], judge_all: Sequence[float], *,
             confidence: float, lam: float | None = None,
             inclusion_probabilities: Sequence[float] | None = None) -> HumanAnchored:
    """The PPI++ interval of a mean beside the classical one (`ppi_py.ppi_mean_ci`, confidence passed).

    lam None: tuned from the data (PPI++, clipped to [0, 1]); 0: the classical interval; 1: plain PPI. With
    `inclusion_probabilities` (items drawn for labels with known, unequal probabilities) it is `active_mean`.
    """
    check_confidence(confidence)
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    f_all = _as_array(judge_all, "judge_all")
    if y.size != f.size:
        raise ValueError(f"truth and judge_labelled differ in length ({y.size} != {f.size})")
    n, N = int(y.size), int(f_all.size)
    if inclusion_probabilities is not None:
        return active_mean(y, f, f_all, inclusion_probabilities, confidence=confidence, lam=lam)
    classical = classical_mean(y, confidence)
    empty = MeanInterval(None, None, None, None)
    if n < 2 or N < 2:
        return HumanAnchored(confidence, n, N, None, empty, classical, None, False,
                             "fewer than 2 labelled or judged items")
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate  # numba: loaded when an interval is asked for

    alpha = 1 - confidence
    if lam is None:
        lam = _tuned_lambda(y, f, f_all)
    estimate = float(np.squeeze(ppi_mean_pointestimate(y, f, f_all, lam=lam)))
    low, high = (float(np.squeeze(v)) for v in ppi_mean_ci(y, f, f_all, alpha=alpha, lam=lam))
    anchored = MeanInterval(estimate, low, high, high - low)
    effective = None
    if classical.width is not None and anchored.width > 0:
        effective = n * (classical.width / anchored.width) ** 2
    return HumanAnchored(confidence, n, N, float(lam), anchored, classical, effective, False)


def _tuned_lambda(y, f, f_all):
    """PPI++'s lambda for a mean, as ppi_py.ppi_mean_ci computes it when given none (its _calc_lam_glm, clipped
    to [0, 1]); computed here so that the value is reported."""
    from ppi_py.ppi import _calc_lam_glm, ppi_mean_pointestimate

    if np.concatenate([f, f_all]).var() == 0:
        return 0.0  # a judge that always answers the same tells nothing (ppi-python's formula is 0 / 0 here)
    w = np.ones(y.size)
    point = ppi_mean_pointestimate(y, f, f_all, lam=1, w=w)
    grads, grads_hat = (w * (y - point))[:, None], (w * (f - point))[:, None]
    return float(_calc_lam_glm(grads, grads_hat, (f_all - point)[:, None], np.eye(1), clip=True))


@dataclass(frozen=True)
class LabelPlan(Result):
    target_width: float
    confidence: float
    n: int  # human labels so far
    N: int
    width_now: float | None
    n_needed: int | None  # human labels for the target width with the judge (PPI++), None: not within N
    more_needed: int | None
    classical_n_needed: int | None  # ... from human labels alone
    classical_more_needed: int | None
    correlation: float | None  # of the human answer and the judge's on the labelled items
    assumption: str


def plan_labels(truth: Sequence[float], judge_labelled: Sequence[float], judge_all: Sequence[float], *,
                target_width: float, confidence: float) -> LabelPlan:
    """How many human labels the interval needs to be at most `target_width` wide, from the variances and the
    judge's agreement seen so far: with the judge, Var(n) = lam^2 var(f) / N + var(y - lam f) / n at PPI++'s lam
    for that n; alone, var(y) / n. The smallest n up to N that reaches the width (None when none does)."""
    check_confidence(confidence)
    if target_width <= 0:
        raise ValueError("target_width must be positive")
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    f_all = _as_array(judge_all, "judge_all")
    n, N = int(y.size), int(f_all.size)
    assumption = ("the variances and the judge's agreement stay as on the labelled items so far; new labels are "
                  "drawn like the ones before")
    if n < 2:
        return LabelPlan(target_width, confidence, n, N, None, None, None, None, None, None, assumption)
    z = norm.ppf(0.5 + confidence / 2)
    # As ppi_py computes them: lambda from the pooled judge variance (ddof 1), the interval from ddof-0 parts.
    var_pooled = np.concatenate([f, f_all]).var(ddof=1)
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    sizes = np.arange(1, N + 1, dtype=float)
    lam = np.clip(cov / ((1 + sizes / N) * var_pooled), 0, 1) if var_pooled > 0 else np.zeros_like(sizes)
    variance = lam ** 2 * f_all.var() / N + (y.var() - 2 * lam * cov + lam ** 2 * f.var()) / sizes
    widths = 2 * z * np.sqrt(variance)
    classical = 2 * z * np.sqrt(y.var() / sizes)

    def first_reaching(w):
        hits = np.flatnonzero(w <= target_width)
        return int(sizes[hits[0]]) if hits.size else None

    needed, classical_needed = first_reaching(widths), first_reaching(classical)
    corr = float(np.corrcoef(y, f)[0, 1]) if y.std() > 0 and f.std() > 0 else None
    return LabelPlan(target_width, confidence, n, N, float(widths[n - 1]) if n <= N else None, needed,
                     None if needed is None else max(needed - n, 0), classical_needed,
                     None if classical_needed is None else max(classical_needed - n, 0), corr, assumption)


@dataclass(frozen=True)
class WidthPoint(Result):
    n: int
    human_anchored: float | None
    classical: float | None


def width_curve(truth: Sequence[float], judge_labelled: Sequence[float], judge_all: Sequence[float], *,
                confidence: float, steps: int = 8, smallest: int = 30, seed: int = 0) -> list[WidthPoint]:
    """Interval widths against the human labels used: nested seeded subsets of the labelled items (from
    `smallest` labels up to all of them), each with its PPI++ and its classical interval."""
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    n = y.size
    if n < 2:
        return []
    order = np.random.default_rng(seed).permutation(n)
    first = min(smallest, n)
    sizes = sorted({int(round(s)) for s in np.geomspace(first, n, num=max(min(steps, n - first + 1), 1))})
    points = []
    for size in sizes:
        pick = order[:size]
        result = ppi_mean(y[pick], f[pick], judge_all, confidence=confidence)
        points.append(WidthPoint(size, result.human_anchored.width, result.classical.width))
    return points


# ---------------------------------------------------------------- active selection

def active_mean(truth: Sequence[float], judge_labelled: Sequence[float], judge_all: Sequence[float],
                inclusion_probabilities: Sequence[float], *, confidence: float,
                lam: float | None = None) -> HumanAnchored:
    """The mean over all N judged items when the labelled ones were drawn independently, each with a known
    probability pi (Poisson sampling; active inference, Zrnic and Candes 2024, with survey sampling's ratio
    form): lam x the judge's mean over all items plus the Hajek mean of the labelled items' residuals y - lam f
    (weights 1 / pi), its linearised design variance sum (r - r_mean)^2 (1 - pi) / pi^2 / (sum 1 / pi)^2 and a
    normal interval. lam None: the value minimising that variance (the weighted covariance of y and f over the
    weighted variance of f), clipped to [0, 1]; lam 0 is the classical interval (the Hajek mean of y), reported
    beside it. ppi-python's weighted interval is not used here: it treats the labelled items as an independent
    sample and over-covers under such a draw."""
    check_confidence(confidence)
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    f_all, pi = _as_array(judge_all, "judge_all"), _as_array(inclusion_probabilities, "inclusion_probabilities")
    if not (y.size == f.size == pi.size):
        raise ValueError("truth, judge_labelled and inclusion_probabilities differ in length")
    if ((pi <= 0) | (pi > 1)).any():
        raise ValueError("inclusion probabilities must be in (0, 1]")
    n, N = int(y.size), int(f_all.size)
    if n < 2:
        empty = MeanInterval(None, None, None, None)
        return HumanAnchored(confidence, n, N, None, empty, empty, None, True, "fewer than 2 labelled items")
    z = norm.ppf(0.5 + confidence / 2)
    weight, spread = 1 / pi, (1 - pi) / pi ** 2
    total = weight.sum()

    def centred(values):
        return values - (weight * values).sum() / total

    def interval(value):
        residual = y - value * f
        estimate = value * f_all.mean() + (weight * residual).sum() / total
        half = z * math.sqrt((centred(residual) ** 2 * spread).sum()) / total
        return MeanInterval(float(estimate), float(estimate - half), float(estimate + half), float(2 * half))

    if lam is None:
        denominator = (centred(f) ** 2 * spread).sum()
        lam = float(np.clip((centred(y) * centred(f) * spread).sum() / denominator, 0, 1)) if denominator > 0 else 0.0
    classical, anchored = interval(0.0), interval(lam)
    effective = n * (classical.width / anchored.width) ** 2 if anchored.width > 0 and classical.width else None
    return HumanAnchored(confidence, n, N, float(lam), anchored, classical, effective, True)


def inclusion_probabilities(uncertainty: Sequence[float], budget: float, uniform_share: float) -> np.ndarray:
    """Each item's probability of being drawn for human labels: proportional to a mix of the judge's
    uncertainty (share 1 - `uniform_share`) and uniform (share `uniform_share`), scaled so that `budget` items
    are drawn on average; probabilities above 1 are capped at 1 and the rest scaled up again until they add up
    to the budget (or to every item). A uniform share above 0 keeps every probability above 0, which the
    weighted estimate needs."""
    u = _as_array(uncertainty, "uncertainty")
    if (u < 0).any():
        raise ValueError("uncertainty must be 0 or more")
    if not 0 <= uniform_share <= 1:
        raise ValueError("uniform_share must be between 0 and 1")
    n = u.size
    if n == 0:
        return u
    budget = min(float(budget), float(n))
    if budget <= 0:
        raise ValueError("budget must be positive")
    share = u / u.sum() if u.sum() > 0 else np.full(n, 1 / n)
    weight = (1 - uniform_share) * share + uniform_share / n
    pi = np.zeros(n)
    capped = np.zeros(n, dtype=bool)
    for _ in range(n):
        free = ~capped
        if not free.any():  # every item drawn for sure (the budget is the whole pool)
            break
        left = budget - capped.sum()
        pi[free] = left * weight[free] / weight[free].sum() if weight[free].sum() > 0 else left / free.sum()
        over = free & (pi >= 1)
        if not over.any():
            break
        capped |= over
        pi[capped] = 1.0
    return np.clip(pi, 0.0, 1.0)


def poisson_draw(probabilities: Sequence[float], seed) -> np.ndarray:
    """Each item drawn independently with its probability (Poisson sampling), seeded: a boolean mask."""
    pi = _as_array(probabilities, "probabilities")
    rng = np.random.default_rng(seed if isinstance(seed, int) else [ord(c) for c in str(seed)])
    return rng.random(pi.size) < pi
