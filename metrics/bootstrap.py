"""Percentile bootstrap over items (or matches), seeded and reproducible."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._common import Result, check_confidence, percentile_interval, to_float


@dataclass(frozen=True)
class BootstrapInterval(Result):
    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    n_resamples: int
    n_undefined: int  # resamples skipped because the statistic was undefined on them
    seed: int | None
    method: str = "percentile bootstrap over items"
    undefined_reason: str | None = None


def resample_indices(n_items: int, n_resamples: int, seed: int | None) -> Iterator[np.ndarray]:
    """Index arrays of n_items drawn with replacement, one per resample."""
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    rng = np.random.default_rng(seed)
    # numpy draws bounds below 2**32 with one 32-bit generator whatever the dtype: int32 gives the int64 draws,
    # in half the memory (a large report draws hundreds of millions).
    dtype = np.int32 if n_items <= np.iinfo(np.int32).max else np.int64
    for _ in range(n_resamples):
        yield rng.integers(0, n_items, size=n_items, dtype=dtype)


def statistic_value(result: Any) -> float | None:
    """Accept a number, None, or a result object carrying `.value`."""
    return to_float(getattr(result, "value", result))


def bootstrap_ci(
    statistic: Callable[[list[Any]], Any],
    data: Sequence[Any],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> BootstrapInterval:
    """Percentile interval of `statistic(items)` over items resampled with replacement.

    `statistic` gets a list of items and returns a float, None, or a result with `.value`;
    resamples on which it is undefined are skipped and counted.
    """
    check_confidence(confidence)
    data = list(data)
    if not data:
        return BootstrapInterval(None, None, None, confidence, n_resamples, 0, seed,
                                 undefined_reason="no items")
    estimate = statistic_value(statistic(data))
    values = []
    for idx in resample_indices(len(data), n_resamples, seed):
        value = statistic_value(statistic([data[i] for i in idx]))
        if value is not None:
            values.append(value)
    low, high = percentile_interval(values, confidence)
    return BootstrapInterval(
        estimate, low, high, confidence, n_resamples, n_resamples - len(values), seed,
        undefined_reason=None if values else "the statistic is undefined on every resample",
    )
