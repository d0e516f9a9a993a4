"""Human-anchored intervals: prediction-powered inference (PPI++, Angelopoulos, Duchi and Zrnic 2023) with
`ppi-python`, beside the classical interval from the human-labelled items alone.

A mean over every item (a model's accuracy, the mean human rating, the human-versus-model gap) is estimated
from the n items people labelled (`truth`), a judge's stand-in for the same quantity on those items
(`judge_labelled`) and on the N - n items nobody labelled (`judge_unlabelled`). ppi-python's variance adds the two
samples' parts as if they were independent: a labelled item is therefore never also passed among the judge-only
ones (that would count it twice and narrow the interval below its coverage); with every item labelled the
interval is the classical one. PPI++ tunes lambda from the data: lambda 0 is the classical interval, lambda 1
plain PPI. The confidence level is always passed to ppi-python (whose default is 90%). Items drawn for labelling
with known probabilities (active selection) get a design-based estimate instead (active inference in survey
sampling's ratio form, `active_mean`).
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
    N: int  # items with a judge's answer: the n labelled ones and the judge-only ones
    lam: float | None  # PPI++ power tuning: 0 = classical, 1 = plain PPI
    human_anchored: MeanInterval
    classical: MeanInterval  # from the n labelled items alone (normal interval)
    effective_n: float | None  # human labels a classical interval would need for the human-anchored width
    weighted: bool  # labelled items weighted by 1 / inclusion probability
    undefined_reason: str | None = None
    method: str = ""  # how the human-anchored interval was computed, in words


# Each method's name, then a colon and what it is: tables show the name, notes the whole text.
PPI_METHOD = ("PPI++: ppi-python's ppi_mean_ci, lambda tuned and clipped to [0, 1], with the labelled items and the "
              "judge-only ones as two independent samples")
ALL_LABELLED = ("classical, every item labelled: fewer than 2 judge-only items are left, so the judge adds nothing and "
                "the interval is the normal interval of the labelled items")
ACTIVE_METHOD = ("design-based: active inference in the Hajek ratio form, labelled items weighted by 1 / their "
                 "inclusion probability, the judge's mean over every item")


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


def ppi_mean(truth: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float], *,
             confidence: float, lam: float | None = None,
             inclusion_probabilities: Sequence[float] | None = None) -> HumanAnchored:
    """The PPI++ interval of a mean beside the classical one (`ppi_py.ppi_mean_ci`, confidence passed).

    `judge_unlabelled`: the judge's answers on the items WITHOUT a human label only (never the labelled ones
    again). Fewer than 2 of them: the classical interval (the judge has nothing to add). lam None: tuned from the
    data (PPI++, clipped to [0, 1]); 0: the classical interval; 1: plain PPI. With `inclusion_probabilities`
    (items drawn for labels with known, unequal probabilities) it is `active_mean` over all n + N - n items.
    """
    check_confidence(confidence)
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    f_unl = _as_array(judge_unlabelled, "judge_unlabelled")
    if y.size != f.size:
        raise ValueError(f"truth and judge_labelled differ in length ({y.size} != {f.size})")
    n, N = int(y.size), int(y.size + f_unl.size)
    if inclusion_probabilities is not None:
        return active_mean(y, f, np.concatenate([f, f_unl]), inclusion_probabilities, confidence=confidence, lam=lam)
    classical = classical_mean(y, confidence)
    empty = MeanInterval(None, None, None, None)
    if n < 2:
        return HumanAnchored(confidence, n, N, None, empty, classical, None, False, "fewer than 2 labelled items",
                             PPI_METHOD)
    if f_unl.size < 2:
        return HumanAnchored(confidence, n, N, 0.0, classical, classical, float(n), False, None, ALL_LABELLED)
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate  # numba: loaded when an interval is asked for

    alpha = 1 - confidence
    if lam is None:
        lam = _tuned_lambda(y, f, f_unl)
    estimate = float(np.squeeze(ppi_mean_pointestimate(y, f, f_unl, lam=lam)))
    low, high = (float(np.squeeze(v)) for v in ppi_mean_ci(y, f, f_unl, alpha=alpha, lam=lam))
    anchored = MeanInterval(estimate, low, high, high - low)
    effective = None
    if classical.width is not None and anchored.width > 0:
        effective = n * (classical.width / anchored.width) ** 2
    return HumanAnchored(confidence, n, N, float(lam), anchored, classical, effective, False, None, PPI_METHOD)


def _tuned_lambda(y, f, f_unl):
    """PPI++'s lambda for a mean, as ppi_py.ppi_mean_ci computes it when given none (its _calc_lam_glm, clipped
    to [0, 1]); computed here so that the value is reported."""
    from ppi_py.ppi import _calc_lam_glm, ppi_mean_pointestimate

    if np.concatenate([f, f_unl]).var() == 0:
        return 0.0  # a judge that always answers the same tells nothing (ppi-python's formula is 0 / 0 here)
    w = np.ones(y.size)
    point = ppi_mean_pointestimate(y, f, f_unl, lam=1, w=w)
    grads, grads_hat = (w * (y - point))[:, None], (w * (f - point))[:, None]
    return float(_calc_lam_glm(grads, grads_hat, (f_unl - point)[:, None], np.eye(1), clip=True))


MIN_PLAN = 2  # no interval exists below 2 labels: no plan promises fewer
PLAN_ASSUMPTION = (
    "the variances and the judge's agreement stay as on the labelled items so far, and new labels are drawn like "
    "the ones before; the number planned is where the expected width reaches the target, so about half of the "
    "campaigns that label that many end a little wider (a median, not a guarantee)")


@dataclass(frozen=True)
class LabelPlan(Result):
    target_width: float
    confidence: float
    n: int  # human labels so far
    N: int
    width_now: float | None  # the human-anchored interval's width now, as ppi_mean gives it
    lam_now: float | None  # ... and its lambda
    n_needed: int | None  # human labels for the target width with the judge (PPI++), None: not within N
    more_needed: int | None
    classical_n_needed: int | None  # ... from human labels alone
    classical_more_needed: int | None
    correlation: float | None  # of the human answer and the judge's on the labelled items
    assumption: str
    refused: str | None = None  # why no plan is made from these labels


def plan_labels(truth: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float], *,
                target_width: float, confidence: float) -> LabelPlan:
    """How many human labels the interval needs to be at most `target_width` wide, from the variances and the
    judge's agreement seen so far, with ppi_mean's own formula: m labels leave N - m judge-only items, and
    Var(m) = lam^2 var(f) / (N - m) + var(y - lam f) / m at PPI++'s lam for that m (lam = cov(y, f) /
    ((1 + m / (N - m)) var(f))); m = N is the classical var(y) / N; alone, var(y) / m. The smallest m from 2 up
    to N that reaches the width (None when none does). At m = n it is the width ppi_mean reports now.

    A pilot in which the judge and the people never disagree (or the people's answers never vary) tells nothing
    about how often they will: no plan is made from it (`refused`), rather than one from a variance of 0."""
    check_confidence(confidence)
    if target_width <= 0:
        raise ValueError("target_width must be positive")
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    f_unl = _as_array(judge_unlabelled, "judge_unlabelled")
    n, N = int(y.size), int(y.size + f_unl.size)
    refused = None
    if n < MIN_PLAN:
        refused = f"{n} labelled item(s): a plan needs {MIN_PLAN} or more"
    elif (y == f).all():
        refused = (f"the judge and the people agree on all {n} labelled items so far, so how often they disagree "
                   "cannot be estimated yet: label more items before planning")
    elif y.var() == 0:
        refused = (f"the people's answers are the same on all {n} labelled items so far, so their spread cannot be "
                   "estimated yet: label more items before planning")
    if refused:
        return LabelPlan(target_width, confidence, n, N, None, None, None, None, None, None, None, PLAN_ASSUMPTION,
                         refused)
    now = ppi_mean(y, f, f_unl, confidence=confidence)
    z = norm.ppf(0.5 + confidence / 2)
    # As ppi_py computes them: lambda from the pooled judge variance (ddof 1), the interval from ddof-0 parts.
    f_every = np.concatenate([f, f_unl])
    var_pooled = f_every.var(ddof=1)
    var_unlabelled = f_unl.var() if f_unl.size >= 2 else f_every.var()
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    sizes = np.arange(MIN_PLAN, N + 1, dtype=float)
    left = N - sizes  # judge-only items at each size
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(left >= 2, np.clip(cov / ((1 + sizes / np.maximum(left, 1)) * var_pooled), 0, 1), 0.0) \
            if var_pooled > 0 else np.zeros_like(sizes)
        imputed = np.where(left >= 2, lam ** 2 * var_unlabelled / np.maximum(left, 1), 0.0)
    variance = imputed + (y.var() - 2 * lam * cov + lam ** 2 * f.var()) / sizes
    widths = 2 * z * np.sqrt(variance)
    classical = 2 * z * np.sqrt(y.var() / sizes)

    def first_reaching(w):
        hits = np.flatnonzero(w <= target_width)
        return int(sizes[hits[0]]) if hits.size else None

    needed, classical_needed = first_reaching(widths), first_reaching(classical)
    corr = float(np.corrcoef(y, f)[0, 1]) if y.std() > 0 and f.std() > 0 else None
    return LabelPlan(target_width, confidence, n, N, now.human_anchored.width, now.lam, needed,
                     None if needed is None else max(needed - n, 0), classical_needed,
                     None if classical_needed is None else max(classical_needed - n, 0), corr, PLAN_ASSUMPTION)


@dataclass(frozen=True)
class WidthPoint(Result):
    n: int
    human_anchored: float | None
    classical: float | None


def width_curve(truth: Sequence[float], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float], *,
                confidence: float, steps: int = 8, smallest: int = 30, seed: int = 0) -> list[WidthPoint]:
    """Interval widths against the human labels used: nested seeded subsets of the labelled items (from
    `smallest` labels up to all of them), each with its PPI++ and its classical interval; the labelled items
    left out of a subset count among the judge-only ones."""
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    f_unl = _as_array(judge_unlabelled, "judge_unlabelled")
    n = y.size
    if n < 2:
        return []
    order = np.random.default_rng(seed).permutation(n)
    first = min(smallest, n)
    sizes = sorted({int(round(s)) for s in np.geomspace(first, n, num=max(min(steps, n - first + 1), 1))})
    points = []
    for size in sizes:
        pick, rest = order[:size], order[size:]
        result = ppi_mean(y[pick], f[pick], np.concatenate([f_unl, f[rest]]), confidence=confidence)
        points.append(WidthPoint(size, result.human_anchored.width, result.classical.width))
    return points


# ---------------------------------------------------------------- coverage at the row's own size

COVERAGE_REPETITIONS = 2000  # simulated campaigns per row: a coverage of 0.95 read within about +-0.005
COVERAGE_SHORTFALL = 0.02  # a figure whose simulated coverage falls more than this below its level is flagged
SIMULATION_CELLS = 4_000_000  # draws held at once by a coverage simulation (campaigns x distinct items)
EXACT_DRAWS = 5_000  # beyond, a sample of many distinct values is drawn from its sums' normal limit
MULTINOMIAL_ROWS = 500  # up to this many distinct values a sample is drawn as multinomial counts


@dataclass(frozen=True)
class Coverage(Result):
    human_anchored: float | None  # share of simulated campaigns whose interval covers the simulated truth
    classical: float | None
    repetitions: int
    undefined_reason: str | None = None


def simulated_coverage(truth: Sequence[float], judge_labelled: Sequence[float], n_unlabelled: int, *,
                       confidence: float, repetitions: int = COVERAGE_REPETITIONS, seed: int = 0) -> Coverage:
    """How often ppi_mean's two intervals cover, at this very n and N - n, in campaigns drawn from the labelled
    items themselves (a bootstrap world: the (human, judge) pairs seen are the population, their mean human
    figure the truth; each simulated campaign draws n labelled pairs and N - n judge-only answers with
    replacement). The draws are multinomial counts over the distinct pairs, so the cost does not grow with n or N;
    the intervals use ppi_mean's formulas (ppi-python's lambda and variance; classical below 2 judge-only items).
    Undefined when the human figure never varies: such a world has no spread to miss."""
    check_confidence(confidence)
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    n, unlabelled = int(y.size), int(n_unlabelled)
    if n < 2:
        return Coverage(None, None, repetitions, "fewer than 2 labelled items")
    if y.var() == 0:
        return Coverage(None, None, repetitions, "the labelled items' figures do not vary")
    pairs, counts = np.unique(np.c_[y, f], axis=0, return_counts=True)
    values, value_counts = np.unique(f, return_counts=True)

    def labelled_columns(a, b):
        return np.c_[a, b, a ** 2, b ** 2, a * b]

    labelled = (labelled_columns(y, f), labelled_columns(pairs[:, 0], pairs[:, 1]), counts / n)
    judge_only = (np.c_[f, f ** 2], np.c_[values, values ** 2], value_counts / n)
    rng = np.random.default_rng(seed)
    z, target = norm.ppf(0.5 + confidence / 2), y.mean()
    covered = np.zeros(2)
    chunk = max(1, SIMULATION_CELLS // max(min(len(pairs), n, EXACT_DRAWS), min(len(values), unlabelled, EXACT_DRAWS),
                                           1))
    for start in range(0, repetitions, chunk):
        size = min(chunk, repetitions - start)
        sum_y, sum_f, sum_yy, sum_ff, sum_yf = _drawn_sums(rng, size, n, *labelled).T
        mean_y, mean_f = sum_y / n, sum_f / n
        var_y, var_f, cov = sum_yy / n - mean_y ** 2, sum_ff / n - mean_f ** 2, sum_yf / n - mean_y * mean_f
        classical = np.abs(mean_y - target) <= z * np.sqrt(np.maximum(var_y, 0) / n) + 1e-12
        if unlabelled < 2:
            anchored = classical
        else:
            sum_u, sum_uu = _drawn_sums(rng, size, unlabelled, *judge_only).T
            mean_u = sum_u / unlabelled
            var_u = np.maximum(sum_uu / unlabelled - mean_u ** 2, 0)
            total = n + unlabelled
            pooled = (sum_ff + sum_uu - (sum_f + sum_u) ** 2 / total) / (total - 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                lam = np.where(pooled > 1e-12, np.clip(cov / ((1 + n / unlabelled) * pooled), 0, 1), 0.0)
            estimate = lam * mean_u + mean_y - lam * mean_f
            residual = np.maximum(var_y - 2 * lam * cov + lam ** 2 * var_f, 0)
            half = z * np.sqrt(lam ** 2 * var_u / unlabelled + residual / n)
            anchored = np.abs(estimate - target) <= half + 1e-12
        covered += anchored.sum(), classical.sum()
    return Coverage(float(covered[0] / repetitions), float(covered[1] / repetitions), repetitions)


def _drawn_sums(rng, size, draws, items, distinct, share):
    """(size, columns): the column sums of `draws` rows drawn with replacement from `items` (items x columns; its
    distinct rows `distinct`, each with its `share`), for `size` campaigns: as multinomial counts over the distinct
    rows when they are few (exact), as drawn items up to EXACT_DRAWS draws (exact), and beyond that, with many
    distinct rows, from the sums' normal limit (a sum of thousands of draws of many values)."""
    if len(distinct) <= MULTINOMIAL_ROWS and len(distinct) * 4 <= draws:
        return rng.multinomial(draws, share, size=size) @ distinct
    if draws <= EXACT_DRAWS:
        picked = rng.integers(0, len(items), size=(size, draws))
        return np.stack([items[:, j][picked].sum(axis=1) for j in range(items.shape[1])], axis=1)
    mean = items.mean(axis=0)
    return rng.multivariate_normal(draws * mean, draws * np.cov(items.T, ddof=0), size=size, method="eigh")


def simulated_active_coverage(truth: Sequence[float], judge_labelled: Sequence[float],
                              inclusion_probabilities: Sequence[float], *, confidence: float,
                              repetitions: int = COVERAGE_REPETITIONS, seed: int = 0) -> Coverage:
    """`simulated_coverage` for active selection (`active_mean`): the bootstrap world is the labelled items, each
    standing for round(1 / pi) items (a Horvitz-Thompson pseudo-population; the judge's mean over it is the
    judge's mean over every item), and each simulated campaign draws every one of those items independently with
    its probability pi, as the campaign did."""
    check_confidence(confidence)
    y, f = _as_array(truth, "truth"), _as_array(judge_labelled, "judge_labelled")
    pi = _as_array(inclusion_probabilities, "inclusion_probabilities")
    if not (y.size == f.size == pi.size):
        raise ValueError("truth, judge_labelled and inclusion_probabilities differ in length")
    if y.size < 2:
        return Coverage(None, None, repetitions, "fewer than 2 labelled items")
    if y.var() == 0:
        return Coverage(None, None, repetitions, "the labelled items' figures do not vary")
    copies = np.maximum(np.round(1 / pi), 1)
    target, judge_mean = (copies * y).sum() / copies.sum(), (copies * f).sum() / copies.sum()
    weight, spread, z = 1 / pi, (1 - pi) / pi ** 2, norm.ppf(0.5 + confidence / 2)
    rng = np.random.default_rng(seed)

    def campaigns(drawn):  # (campaigns, labelled items): how many copies of each the campaign drew
        total = np.maximum(drawn @ weight, 1e-300)
        enough = (drawn > 0).sum(axis=1) >= 2

        def centred(values):
            return values[None, :] - ((drawn @ (weight * values)) / total)[:, None]

        def covers(lam):
            residual = y[None, :] - lam[:, None] * f[None, :]
            mean_residual = (drawn * weight * residual).sum(axis=1) / total
            half = z * np.sqrt((drawn * (residual - mean_residual[:, None]) ** 2 * spread).sum(axis=1)) / total
            return enough & (np.abs(lam * judge_mean + mean_residual - target) <= half + 1e-12)

        cy, cf = centred(y), centred(f)
        denominator = (drawn * cf ** 2 * spread).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(denominator > 0, np.clip((drawn * cy * cf * spread).sum(axis=1) / denominator, 0, 1), 0.0)
        return covers(lam).sum(), covers(np.zeros(len(drawn))).sum()

    covered = np.zeros(2)
    chunk = max(1, SIMULATION_CELLS // 8 // y.size)  # several campaigns x items arrays live at once
    for start in range(0, repetitions, chunk):
        size = min(chunk, repetitions - start)
        covered += campaigns(rng.binomial(copies.astype(np.int64), pi, size=(size, y.size)))
    return Coverage(float(covered[0] / repetitions), float(covered[1] / repetitions), repetitions)


def coverage_short(coverage: Coverage, confidence: float) -> str | None:
    """The flag's reason when a simulated coverage falls more than COVERAGE_SHORTFALL below the level asked."""
    if coverage.undefined_reason:
        return f"no coverage: {coverage.undefined_reason}"
    worst = min(c for c in (coverage.human_anchored, coverage.classical) if c is not None)
    if worst < confidence - COVERAGE_SHORTFALL:
        return (f"simulated coverage {worst:.2f} of a {confidence:.0%} interval at this size, below "
                f"{confidence - COVERAGE_SHORTFALL:.2f}")
    return None


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
        return HumanAnchored(confidence, n, N, None, empty, empty, None, True, "fewer than 2 labelled items",
                             ACTIVE_METHOD)
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
    return HumanAnchored(confidence, n, N, float(lam), anchored, classical, effective, True, None, ACTIVE_METHOD)


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
