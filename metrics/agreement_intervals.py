"""Intervals for Fleiss' kappa and Krippendorff's alpha: the percentile bootstrap over items and the jackknife
(leave one item out), both resampling whole items with all their ratings.

Both statistics are functions of sums over items (Fleiss: each item's category counts and its pairwise agreement;
alpha: each item's coincidence matrix), so a resample is a weighted sum of the items' parts, with no statistic
recomputed from labels. The values are statsmodels' and the krippendorff package's (checked in the tests, with the
bootstrap against `bootstrap.bootstrap_ci` over the package's statistic).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import norm

from ._common import Result, check_confidence, tail_levels
from .agreement import (
    _category_list,
    _count_table,
    _modal_raters,
    _rated_items,
    alpha_table,
    fleiss_kappa,
    krippendorff_alpha,
)

METHOD = ("bootstrap over items, bias-corrected and accelerated (BCa; each resample draws whole items with all their "
          "ratings); jackknife: leave one item out, normal interval from its standard error")


@dataclass(frozen=True)
class AgreementInterval(Result):
    statistic: str
    estimate: float | None
    low: float | None  # BCa bootstrap
    high: float | None
    jackknife_se: float | None
    jackknife_low: float | None
    jackknife_high: float | None
    confidence: float
    n_items: int
    n_resamples: int
    n_undefined: int  # resamples on which the statistic was undefined (left out of the percentiles)
    seed: int | None
    method: str = METHOD
    undefined_reason: str | None = None


def _kinds(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an items x categories count table and how many items have each: items with the same
    counts add the same parts."""
    return np.unique(table, axis=0, return_counts=True)


def _interval(statistic, kinds: np.ndarray, count: np.ndarray, value_of: Callable[[np.ndarray], np.ndarray],
              estimate, *, confidence, n_resamples, seed) -> AgreementInterval:
    """Bootstrap and jackknife of value_of(sum of the items' parts); `kinds`: the parts of each kind of item
    (kinds x p), `count`: its items. A resample of n items with replacement holds each kind a multinomial number
    of times, drawn as such (the same distribution as drawing items one by one, at a cost that does not grow with
    n); leaving out one item of a kind gives the same value for each of them."""
    n = int(count.sum())
    rng = np.random.default_rng(seed)
    values = value_of(rng.multinomial(n, count / n, size=n_resamples).astype(float) @ kinds)
    defined = values[np.isfinite(values)]
    se = jlow = jhigh = None
    levels = tail_levels(confidence)
    if n >= 2:
        jack = value_of((count[:, None] * kinds).sum(axis=0)[None, :] - kinds)  # one value per kind
        if np.isfinite(jack).all():
            centre = (count * jack).sum() / n
            spread = centre - jack
            se = float(np.sqrt((n - 1) / n * (count * spread ** 2).sum()))
            half = norm.ppf(0.5 + confidence / 2) * se
            jlow, jhigh = float(estimate - half), float(estimate + half)
            levels = _bca_levels(defined, estimate, count, spread, levels)
    low, high = (float(v) for v in np.quantile(defined, levels)) if defined.size else (None, None)
    return AgreementInterval(statistic, estimate, low, high, se, jlow, jhigh, confidence, n, n_resamples,
                             int(n_resamples - defined.size), seed)


def _bca_levels(values, estimate, count, spread, levels):
    """Efron's bias-corrected and accelerated quantile levels: the bias from the share of resamples below the
    estimate, the acceleration from the jackknife (sum d^3 / (6 (sum d^2)^1.5), d = mean - leave-one-out value)."""
    below = np.mean(values < estimate) + np.mean(values == estimate) / 2
    if not 0 < below < 1:
        return levels
    bias = norm.ppf(below)
    squares = (count * spread ** 2).sum()
    acceleration = (count * spread ** 3).sum() / (6 * squares ** 1.5) if squares > 0 else 0.0
    z = bias + norm.ppf(levels)
    return tuple(float(v) for v in norm.cdf(bias + z / (1 - acceleration * z)))


def _undefined(statistic, reason, confidence, n_items, n_resamples, seed):
    return AgreementInterval(statistic, None, None, None, None, None, None, confidence, n_items, n_resamples, 0, seed,
                             undefined_reason=reason)


def fleiss_kappa_interval(ratings_by_item: Sequence[Sequence[Any]], categories: Sequence[Any] | None = None, *,
                          confidence: float = 0.95, n_resamples: int = 1000, seed: int | None = 0
                          ) -> AgreementInterval:
    """Fleiss' kappa (`fleiss_kappa`, given labels: the items with the modal number of ratings) with its
    intervals."""
    check_confidence(confidence)
    point = fleiss_kappa(ratings_by_item, categories=categories, given="labels")
    if point.value is None:
        return _undefined(point.statistic, point.undefined_reason, confidence, point.n_items, n_resamples, seed)
    items = _rated_items(ratings_by_item)
    cats = _category_list(items, categories)
    m = _modal_raters([len(item) for item in items])
    table, count = _kinds(_count_table([item for item in items if len(item) == m], {c: i for i, c in enumerate(cats)}))
    agreement = ((table ** 2).sum(axis=1) - m) / (m * (m - 1))
    kinds = np.c_[table, agreement, np.ones(len(table))].astype(float)

    def value_of(totals):
        count = totals[:, -1]
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = totals[:, :-2] / (count * m)[:, None]
            chance = (shares ** 2).sum(axis=1)
            return (totals[:, -2] / count - chance) / (1 - chance)

    return _interval(point.statistic, kinds, count, value_of, point.value, confidence=confidence,
                     n_resamples=n_resamples, seed=seed)


def krippendorff_alpha_interval(ratings_by_item: Sequence[Sequence[Any]],
                                level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
                                value_domain: Sequence[Any] | None = None, *, confidence: float = 0.95,
                                n_resamples: int = 1000, seed: int | None = 0) -> AgreementInterval:
    """Krippendorff's alpha (`krippendorff_alpha`) with its intervals: each item's coincidences
    (n_c n_k - [c = k] n_c) / (m - 1) summed over the resampled items, the distances from the resample's own
    margins (ordinal) or the values (interval, ratio)."""
    check_confidence(confidence)
    point = krippendorff_alpha(ratings_by_item, level=level, value_domain=value_domain)
    if point.value is None:
        return _undefined(point.statistic, point.undefined_reason, confidence, point.n_items, n_resamples, seed)
    items = _rated_items(ratings_by_item)
    paired = [item for item in items if len(item) >= 2]
    observed = list(dict.fromkeys(v for item in paired for v in item))
    if value_domain is not None:
        domain = _category_list(items, value_domain)
    else:
        domain = observed if level == "nominal" else sorted(observed)
    table, values = alpha_table(paired, domain, level)
    counts, count = _kinds(table)
    k = counts.shape[1]
    raters = counts.sum(axis=1)
    coincidences = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (raters - 1)[:, None,
                                                                                                            None]
    kinds = coincidences.reshape(len(counts), k * k)
    fixed = None
    if level == "nominal":
        fixed = 1.0 - np.eye(k)
    elif level == "interval":
        fixed = (values[:, None] - values[None, :]) ** 2
    elif level == "ratio":
        with np.errstate(divide="ignore", invalid="ignore"):
            fixed = np.nan_to_num(((values[:, None] - values[None, :]) / (values[:, None] + values[None, :])) ** 2)

    def value_of(totals):
        o = totals.reshape(-1, k, k)
        margins = o.sum(axis=2)
        n = margins.sum(axis=1)
        if fixed is not None:
            delta = np.broadcast_to(fixed, o.shape)
        else:  # ordinal: (n_c + ... + n_k - (n_c + n_k) / 2) ^ 2 on the resample's margins
            upto = np.cumsum(margins, axis=1)
            lo, hi = np.minimum.outer(np.arange(k), np.arange(k)), np.maximum.outer(np.arange(k), np.arange(k))
            between = upto[:, hi] - upto[:, lo] + margins[:, lo]
            delta = (between - (margins[:, :, None] + margins[:, None, :]) / 2) ** 2
        observed_d = (o * delta).sum(axis=(1, 2))
        expected_d = (margins[:, :, None] * margins[:, None, :] * delta).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1 - (n - 1) * observed_d / expected_d

    return _interval(point.statistic, kinds, count, value_of, point.value, confidence=confidence,
                     n_resamples=n_resamples, seed=seed)
