"""Intervals for Fleiss' kappa and Krippendorff's alpha: the percentile bootstrap over items and the jackknife
(leave one item out), both resampling whole items with all their ratings.

Both statistics are functions of sums over items (Fleiss: each item's category counts and its pairwise agreement;
alpha: each item's coincidence matrix), so a resample is a weighted sum of the items' parts: the same draws as
`bootstrap.resample_indices`, counted per item, with no statistic recomputed from labels. The values at weight 1
are statsmodels' and the krippendorff package's (checked in the tests).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import norm

from ._common import Result, check_confidence, percentile_interval
from .agreement import (
    _category_list,
    _count_table,
    _modal_raters,
    _rated_items,
    alpha_table,
    fleiss_kappa,
    krippendorff_alpha,
)
from .bootstrap import resample_indices

METHOD = ("percentile bootstrap over items (each resample draws whole items with all their ratings); jackknife: "
          "leave one item out, normal interval from its standard error")
CHUNK = 2_000_000  # resample weights held at once (resamples x items)


@dataclass(frozen=True)
class AgreementInterval(Result):
    statistic: str
    estimate: float | None
    low: float | None  # percentile bootstrap
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


def _interval(statistic, parts: np.ndarray, value_of: Callable[[np.ndarray], np.ndarray], estimate, *,
              confidence, n_resamples, seed) -> AgreementInterval:
    """Bootstrap and jackknife of value_of(sum of the items' parts), parts: items x p."""
    n = parts.shape[0]
    values = []
    chunk = max(1, CHUNK // max(n, 1))
    draws = resample_indices(n, n_resamples, seed)
    for start in range(0, n_resamples, chunk):
        weights = np.array([np.bincount(next(draws), minlength=n) for _ in range(min(chunk, n_resamples - start))])
        values.append(value_of(weights @ parts))
    values = np.concatenate(values)
    defined = values[np.isfinite(values)]
    low, high = percentile_interval(defined, confidence)
    jack = value_of(parts.sum(axis=0)[None, :] - parts)
    se = jlow = jhigh = None
    if n >= 2 and np.isfinite(jack).all():
        se = float(np.sqrt((n - 1) / n * ((jack - jack.mean()) ** 2).sum()))
        half = norm.ppf(0.5 + confidence / 2) * se
        jlow, jhigh = float(estimate - half), float(estimate + half)
    return AgreementInterval(statistic, estimate, low, high, se, jlow, jhigh, confidence, n, n_resamples,
                             int(n_resamples - defined.size), seed)


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
    table = _count_table([item for item in items if len(item) == m], {c: i for i, c in enumerate(cats)})
    agreement = ((table ** 2).sum(axis=1) - m) / (m * (m - 1))
    parts = np.c_[table, agreement, np.ones(len(table))].astype(float)

    def value_of(totals):
        count = totals[:, -1]
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = totals[:, :-2] / (count * m)[:, None]
            chance = (shares ** 2).sum(axis=1)
            return (totals[:, -2] / count - chance) / (1 - chance)

    return _interval(point.statistic, parts, value_of, point.value, confidence=confidence, n_resamples=n_resamples,
                     seed=seed)


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
    counts, values = alpha_table(paired, domain, level)
    k = counts.shape[1]
    raters = counts.sum(axis=1)
    coincidences = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (raters - 1)[:, None,
                                                                                                            None]
    parts = coincidences.reshape(len(counts), k * k)
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

    return _interval(point.statistic, parts, value_of, point.value, confidence=confidence, n_resamples=n_resamples,
                     seed=seed)
