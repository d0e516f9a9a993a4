"""Confidence sequences: intervals that hold at every look while labels still arrive.

A fixed-n interval (metrics.prediction_powered) covers the truth with its stated probability only at a number of
labels set in advance; looked at after every label and stopped on when it looks clear, it misses about half the
time. A confidence sequence covers the truth at all numbers of labels at once, so it may be watched and stopped
on at will.

- `asymptotic_sequence`: the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas
  (Ann. Statist. 2024, "Time-uniform central limit theory and asymptotic confidence sequences", Theorem 2.2 and
  its martingale form): the estimate plus or minus sigma_hat times the two-sided normal-mixture boundary of
  Howard, Ramdas, McAuliffe and Sekhon (2021), tuned to be narrowest at `t_opt` labels. One function serves the
  classical mean (lambda 0), PPI++ (lambda tuned from the labels before each one, so that it is predictable) and
  active draws (weights 1 / q, the Hajek ratio and its linearised variance).
- `betting_sequence`: the hedged-capital betting confidence sequence of Waudby-Smith and Ramdas ("Estimating
  means of bounded random variables by betting", JRSS-B 2024: Theorem 3, and Theorem 4 without replacement for a
  finite campaign), with their predictable plug-in bets (cap 0.5, hedge weight 0.5): non-asymptotic, for answers
  known to lie in a bounded range.
- `gap_verdict`: what a confidence sequence for a gap says now: separated, equivalent within a margin, or about
  how many more labels either needs; `more_items_or_raters` whether more items or more raters per item narrow it
  faster.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._common import Result, check_confidence
from .prediction_powered import _as_array

# Where the asymptotic sequence is narrowest, when the caller names no number of labels.
DEFAULT_T_OPT = 500
# The predictable plug-in bets' cap and the hedge's weight (Waudby-Smith and Ramdas's recommended values).
BET_CAP = 0.5
HEDGE_WEIGHT = 0.5
GRID_POINTS = 1001
EXACT_GRID_MAX = 2000  # 0/1 answers from at most this many items: every possible mean is a candidate
CELLS = 4_000_000  # numbers held at once by the betting sequence's candidate grid


def mixture_rho(t_opt: float, alpha: float) -> float:
    """The normal mixture's rho that makes the two-sided boundary tightest at intrinsic time `t_opt`
    (Howard et al. 2021, eq. (3.5); Waudby-Smith et al. 2024, rho^2 = 1 / this)."""
    if t_opt <= 0:
        raise ValueError("t_opt must be positive")
    log_inv = math.log(1 / alpha)
    return t_opt / (2 * log_inv + math.log(1 + 2 * log_inv))


def normal_mixture_boundary(v, rho: float, alpha: float):
    """The two-sided normal-mixture boundary of a sum with intrinsic time v: sqrt((v + rho) (log(1 + v / rho)
    + 2 log(1 / alpha))); a sum of mean-zero, unit-variance increments crosses it at some time with
    probability at most alpha (asymptotically, Waudby-Smith et al. 2024)."""
    v = np.asarray(v, dtype=float)
    return np.sqrt((v + rho) * (np.log1p(v / rho) + 2 * math.log(1 / alpha)))


@dataclass(frozen=True)
class SequencePath(Result):
    """A confidence sequence after each label (arrays, one entry per label count t = 1..n) and its summary now."""
    method: str  # "asymptotic" or "betting"
    estimator: str  # "classical", "ppi++" or "active"
    confidence: float
    t: int
    estimate: float | None
    low: float | None
    high: float | None
    width: float | None
    lam: float | None  # the lambda the last label used (0 for classical)
    sigma: float | None  # the standard deviation the boundary was scaled by (asymptotic)
    t_opt: int | None
    lows: np.ndarray
    highs: np.ndarray
    estimates: np.ndarray
    undefined_reason: str | None = None

    def summary(self) -> dict:
        """The JSON-ready figures now, without the per-label arrays."""
        return {k: v for k, v in self.to_dict().items() if k not in ("lows", "highs", "estimates")}

    def points(self, count: int = 40) -> list[dict]:
        """At most `count` (t, estimate, low, high) points along the path, evenly spaced in log t, for a plot."""
        n = self.estimates.size
        if n == 0:
            return []
        ts = sorted({int(round(x)) for x in np.geomspace(1, n, num=min(count, n))} | {n})
        return [{"t": t, "estimate": _finite(self.estimates[t - 1]), "low": _finite(self.lows[t - 1]),
                 "high": _finite(self.highs[t - 1])} for t in ts]


def _finite(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _lagged(cumulative):
    """The running sums before each label: 0 for the first, then the sums through label t - 1."""
    return np.concatenate([[0.0], cumulative[:-1]])


def predictable_lambda(truth, judge_labelled, judge_all, weights=None):
    """lambda for label t computed from labels 1..t-1 only (0 for the first two): PPI++'s power tuning for a mean
    (cov(y, f) / ((1 + n / N) var(f)), the judge's variance pooled over its labelled and all answers, as
    ppi-python), or with `weights` (active draws) the weighted covariance over the weighted variance of f with
    weights w^2, the variance-minimising value for a Hansen-Hurwitz mean; clipped to [0, 1]."""
    y, f, f_all = (_as_array(v, n) for v, n in ((truth, "truth"), (judge_labelled, "judge_labelled"),
                                                 (judge_all, "judge_all")))
    N = f_all.size
    if weights is None:
        n = _lagged(np.cumsum(np.ones_like(y)))
        sy, sf = _lagged(np.cumsum(y)), _lagged(np.cumsum(f))
        syf, sff = _lagged(np.cumsum(y * f)), _lagged(np.cumsum(f * f))
        with np.errstate(invalid="ignore", divide="ignore"):
            cov = syf / n - (sy / n) * (sf / n)
            pooled_n = n + N
            pooled_mean = (sf + f_all.sum()) / pooled_n
            pooled_var = ((sff + (f_all ** 2).sum()) - pooled_n * pooled_mean ** 2) / (pooled_n - 1)
            lam = cov / ((1 + n / N) * pooled_var)
    else:
        w = _as_array(weights, "weights")
        w2 = w * w
        sw, swy, swf = (_lagged(np.cumsum(w * v)) for v in (np.ones_like(y), y, f))
        s2, s2y, s2f = (_lagged(np.cumsum(w2 * v)) for v in (np.ones_like(y), y, f))
        s2yf, s2ff = _lagged(np.cumsum(w2 * y * f)), _lagged(np.cumsum(w2 * f * f))
        with np.errstate(invalid="ignore", divide="ignore"):
            a, b = swy / sw, swf / sw  # weighted means of y and f
            cov = s2yf - b * s2y - a * s2f + a * b * s2
            var = s2ff - 2 * b * s2f + b * b * s2
            lam = cov / var
    lam = np.where(np.isfinite(lam), lam, 0.0)
    lam[:2] = 0.0
    return np.clip(lam, 0.0, 1.0)


def asymptotic_sequence(truth: Sequence[float], judge_labelled: Sequence[float] | None = None,
                        judge_all: Sequence[float] | None = None, *, confidence: float,
                        weights: Sequence[float] | None = None, t_opt: int = DEFAULT_T_OPT,
                        lam: float | None = None) -> SequencePath:
    """The asymptotic confidence sequence of the mean over the judged items, labels in arrival order.

    Without a judge: the classical mean. With one (`judge_labelled` on the labelled items, `judge_all` on all N):
    PPI++, each label's term psi_t = y_t - lam_t f_t + lam_t mean(judge_all) with lam_t from the labels before t
    (`predictable_lambda`; `lam` fixes it instead, 0 giving the classical sequence). `weights` (1 / the item's
    drawing probability times N, for labels drawn with replacement with known probabilities): the Hajek mean
    sum w psi / sum w. The sequence is that mean plus or minus sigma_hat B(t) / sum w, B the two-sided
    normal-mixture boundary tuned to `t_opt` and sigma_hat^2 = sum w^2 (psi - mean)^2 / t (ddof 0)."""
    check_confidence(confidence)
    alpha = 1 - confidence
    y = _as_array(truth, "truth")
    n = y.size
    with_judge = judge_labelled is not None
    if with_judge:
        f, f_all = _as_array(judge_labelled, "judge_labelled"), _as_array(judge_all, "judge_all")
        if f.size != n:
            raise ValueError(f"truth and judge_labelled differ in length ({n} != {f.size})")
    w = np.ones(n) if weights is None else _as_array(weights, "weights")
    if w.size != n:
        raise ValueError(f"truth and weights differ in length ({n} != {w.size})")
    if (w <= 0).any():
        raise ValueError("weights must be positive")
    estimator = "active" if weights is not None else ("ppi++" if with_judge and lam != 0 else "classical")
    empty = np.full(n, np.nan)
    if n < 2:
        return SequencePath("asymptotic", estimator, confidence, n, float(y.mean()) if n else None, None, None,
                            None, None, None, t_opt, empty, empty, np.full(n, y.mean()) if n else empty,
                            "fewer than 2 labels")
    if with_judge and lam is None:
        lams = predictable_lambda(y, f, f_all, None if weights is None else w)
    else:
        lams = np.full(n, float(lam or 0.0))
    psi = y - lams * f + lams * f_all.mean() if with_judge else y
    w2 = w * w
    sw, swpsi = np.cumsum(w), np.cumsum(w * psi)
    s2, s2psi, s2psi2 = np.cumsum(w2), np.cumsum(w2 * psi), np.cumsum(w2 * psi * psi)
    estimates = swpsi / sw
    t = np.arange(1, n + 1, dtype=float)
    variance = np.maximum(s2psi2 - 2 * estimates * s2psi + estimates ** 2 * s2, 0.0) / t
    sigma = np.sqrt(variance)
    radius = sigma * normal_mixture_boundary(t, mixture_rho(t_opt, alpha), alpha) / sw
    lows, highs = estimates - radius, estimates + radius
    lows[0] = highs[0] = np.nan  # one label says nothing of the spread
    return SequencePath("asymptotic", estimator, confidence, n, float(estimates[-1]), float(lows[-1]),
                        float(highs[-1]), float(highs[-1] - lows[-1]), float(lams[-1]), float(sigma[-1]), t_opt,
                        lows, highs, estimates)


# ---------------------------------------------------------------- betting (non-asymptotic, bounded answers)

def hedged_log_capital(x: np.ndarray, m: np.ndarray, alpha: float, population: int | None = None) -> np.ndarray:
    """log of the hedged capital max(w K+, (1 - w) K-) after each observation, for each candidate mean in `m`:
    an array (len(x), len(m)). `x` in [0, 1], in arrival order. Bets are Waudby-Smith and Ramdas's predictable
    plug-in, lambda_t = sqrt(2 log(2 / alpha) / (sigma_{t-1}^2 t log(1 + t))), capped at 0.5 / m_t and
    0.5 / (1 - m_t). With `population` N (drawn without replacement), m_t = (N m - sum of the past) / (N - t + 1);
    a candidate that cannot be the population mean any more gets infinite capital."""
    x = np.asarray(x, dtype=float)
    m = np.asarray(m, dtype=float)
    n = x.size
    t = np.arange(1, n + 1, dtype=float)
    past = _lagged(np.cumsum(x))
    mean_after = (0.5 + np.cumsum(x)) / (t + 1)
    squared = _lagged(np.cumsum((x - mean_after) ** 2))
    variance_before = (0.25 + squared) / t
    raw = np.sqrt(2 * math.log(2 / alpha) / (variance_before * t * np.log1p(t)))
    if population is None:
        mt = np.broadcast_to(m[None, :], (n, m.size))
    else:
        remaining = population - t + 1
        if (remaining <= 0).any():
            raise ValueError(f"more labels ({n}) than items in the population ({population})")
        mt = (population * m[None, :] - past[:, None]) / remaining[:, None]
    feasible = (mt >= 0) & (mt <= 1)
    if population is not None:  # and after this answer: the rest can still make up the candidate's total
        total, seen = population * m[None, :], np.cumsum(x)[:, None]
        feasible &= (total >= seen - 1e-9) & (total <= seen + (population - t)[:, None] + 1e-9)
    mt_safe = np.clip(mt, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        plus = np.minimum(raw[:, None], BET_CAP / mt_safe)
        minus = np.minimum(raw[:, None], BET_CAP / (1 - mt_safe))
        delta = x[:, None] - mt_safe
        log_plus = np.cumsum(np.log1p(plus * delta), axis=0)
        log_minus = np.cumsum(np.log1p(-minus * delta), axis=0)
    capital = np.maximum(math.log(HEDGE_WEIGHT) + log_plus, math.log(1 - HEDGE_WEIGHT) + log_minus)
    # impossible now -> impossible from then on (the running maximum below keeps it rejected)
    return np.where(np.minimum.accumulate(feasible, axis=0), capital, np.inf)


def betting_sequence(values: Sequence[float], *, confidence: float, lower: float, upper: float,
                     population: int | None = None, grid_points: int = GRID_POINTS) -> SequencePath:
    """The betting confidence sequence of the mean of answers known to lie in [lower, upper], in arrival order:
    the candidate means whose hedged capital has never reached 1 / alpha (a running intersection), on a grid of
    `grid_points` candidates (or, with `population` N up to EXACT_GRID_MAX, every possible mean of N answers
    when they are 0/1), the ends widened by one grid step. `population`: the items are drawn without replacement
    from N."""
    check_confidence(confidence)
    if not upper > lower:
        raise ValueError("upper must be above lower")
    alpha = 1 - confidence
    raw = _as_array(values, "values")
    if ((raw < lower) | (raw > upper)).any():
        raise ValueError(f"values must lie in [{lower}, {upper}]")
    span = upper - lower
    x = (raw - lower) / span
    n = x.size
    empty = np.full(n, np.nan)
    if n == 0:
        return SequencePath("betting", "classical", confidence, 0, None, None, None, None, 0.0, None, None,
                            empty, empty, empty, "no labels")
    binary = np.isin(x, (0.0, 1.0)).all()
    if population is not None and binary and population <= EXACT_GRID_MAX:
        grid = np.arange(population + 1) / population
    else:
        grid = np.linspace(0, 1, grid_points)
    step = grid[1] - grid[0]
    # The lowest and highest candidate still standing after each label, a slice of candidates at a time (each
    # candidate's capital is its own), so that memory stays at about CELLS numbers whatever n.
    lowest, highest = np.full(n, np.inf), np.full(n, -np.inf)
    width = max(CELLS // max(n, 1), 1)
    for start in range(0, grid.size, width):
        part = grid[start:start + width]
        alive = np.maximum.accumulate(hedged_log_capital(x, part, alpha, population), axis=0) < math.log(1 / alpha)
        seen = alive.any(axis=1)
        first = part[alive.argmax(axis=1)]
        last = part[part.size - 1 - alive[:, ::-1].argmax(axis=1)]
        lowest = np.where(seen, np.minimum(lowest, first), lowest)
        highest = np.where(seen, np.maximum(highest, last), highest)
    any_alive = np.isfinite(lowest)
    lows = np.where(any_alive, np.clip(lowest - step, 0, 1), np.nan) * span + lower
    highs = np.where(any_alive, np.clip(highest + step, 0, 1), np.nan) * span + lower
    estimates = np.cumsum(raw) / np.arange(1, n + 1)
    reason = None if any_alive[-1] else "every candidate mean rejected (the answers contradict the range)"
    return SequencePath("betting", "classical", confidence, n, float(estimates[-1]), _finite(lows[-1]),
                        _finite(highs[-1]), _finite(highs[-1] - lows[-1]), 0.0, None, None, lows, highs, estimates,
                        reason)


# ---------------------------------------------------------------- what the sequence says now

@dataclass(frozen=True)
class Verdict(Result):
    verdict: str  # "separated", "equivalent" or "continue"
    margin: float
    low: float | None
    high: float | None
    more_labels: int | None  # for "continue": about how many more labels either verdict needs; None: not in sight
    reaches: str | None  # which verdict those labels would most likely give
    assumption: str


def gap_verdict(path: SequencePath, *, margin: float, available: int | None = None,
                weight_mean: float = 1.0) -> Verdict:
    """The verdict of a confidence sequence for a gap (a difference, 0 meaning none): "separated" when it
    excludes 0, "equivalent" when it lies within [-margin, margin], else "continue" with about how many more
    labels reach either, assuming the estimate and its spread stay as they are now (the sequence's radius
    sigma B(t) / (t w) at later t; `available`: labels that can still be had, None when unbounded). A betting
    path is projected with its radius shrinking as sqrt(log t / t)."""
    if margin < 0:
        raise ValueError("margin must be 0 or more")
    assumption = "the estimate and its spread stay as they are now; labels keep arriving as they did"
    if path.low is None or path.high is None:
        return Verdict("continue", margin, None, None, None, None, assumption)
    if path.low > 0 or path.high < 0:
        return Verdict("separated", margin, path.low, path.high, 0, "separated", assumption)
    if -margin <= path.low and path.high <= margin:
        return Verdict("equivalent", margin, path.low, path.high, 0, "equivalent", assumption)
    t0 = path.t
    estimate = path.estimate
    horizon = t0 * 1000 if available is None else t0 + max(int(available), 0)
    ts = np.unique(np.geomspace(t0 + 1, max(horizon, t0 + 1), num=4000).astype(int))
    if path.method == "asymptotic" and path.sigma is not None:
        alpha = 1 - path.confidence
        radius = path.sigma * normal_mixture_boundary(ts.astype(float), mixture_rho(path.t_opt, alpha), alpha) \
            / (ts * weight_mean)
    else:
        half = (path.high - path.low) / 2
        radius = half * np.sqrt(np.log(ts) / ts) / math.sqrt(math.log(max(t0, 2)) / t0)
    separated = np.abs(estimate) > radius
    equivalent = np.abs(estimate) + radius <= margin
    hits = np.flatnonzero(separated | equivalent)
    if not hits.size:
        return Verdict("continue", margin, path.low, path.high, None, None, assumption)
    k = hits[0]
    return Verdict("continue", margin, path.low, path.high, int(ts[k] - t0),
                   "separated" if separated[k] else "equivalent", assumption)


@dataclass(frozen=True)
class ItemsOrRaters(Result):
    advice: str  # "more items", "more raters per item" or "either"
    between_items: float | None  # variance of the item's true figure
    within_items: float | None  # a single rater's variance around it
    raters_per_item: float | None
    ratio: float | None  # variance removed per label by a new item over that by a new rater on a labelled item
    items_left: int | None


def more_items_or_raters(per_item: Sequence[Sequence[float]], items_left: int | None = None) -> ItemsOrRaters:
    """Whether the next labels narrow the mean faster on new items or as more raters on the labelled ones: the
    one-way random-effects variance components (between items, within an item) of the raters' answers; with n
    items and k raters each the mean's variance is (s_b^2 + s_w^2 / k) / n, so a label on a new item removes
    (k s_b^2 + s_w^2) / s_w^2 times as much as one more rater per item does (per label). More raters help only
    when no item is left to label."""
    groups = [np.asarray(g, dtype=float) for g in per_item if len(g) >= 1]
    if len(groups) < 2 or not any(g.size >= 2 for g in groups):
        return ItemsOrRaters("more items" if items_left else "either", None, None, None, None, items_left)
    sizes = np.array([g.size for g in groups], dtype=float)
    means = np.array([g.mean() for g in groups])
    within_ss = sum(((g - g.mean()) ** 2).sum() for g in groups)
    within_df = (sizes - 1).sum()
    s_w = within_ss / within_df if within_df > 0 else 0.0
    k = sizes.mean()
    s_b = max(means.var(ddof=1) - s_w * np.mean(1 / sizes), 0.0)
    ratio = (k * s_b + s_w) / s_w if s_w > 0 else None
    advice = "more items" if items_left != 0 else ("more raters per item" if s_w > 0 else "either")
    return ItemsOrRaters(advice, float(s_b), float(s_w), float(k), None if ratio is None else float(ratio),
                         items_left)
