"""Helpers shared by the metrics modules: missing values, plain Python types, results."""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

import numpy as np

_FLOATS = (float, np.floating)


def is_missing(value: Any) -> bool:
    """None and NaN mean "no rating"; anything else is a rating."""
    return value is None or (isinstance(value, _FLOATS) and value != value)  # only NaN differs from itself


def present(values: Iterable[Any]) -> list[Any]:
    # is_missing written out: this runs once per rating, millions of times in a large report.
    return [v for v in values if v is not None and not (isinstance(v, _FLOATS) and v != v)]


def plain(value: Any) -> Any:
    """numpy scalars -> Python scalars, so results stay JSON-serialisable."""
    return value.item() if isinstance(value, np.generic) else value


def plain_present(values: Iterable[Any]) -> list[Any]:
    """`plain` of each value that is not missing, in one pass (see `present`)."""
    return [v.item() if isinstance(v, np.generic) else v for v in values
            if v is not None and not (isinstance(v, _FLOATS) and v != v)]


def to_float(value: Any) -> float | None:
    """A finite Python float, or None for NaN/inf/None."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def as_number(value: Any) -> float | None:
    """A rating as a float (yes/no count as 1/0); None, text, lists and dicts are not numbers."""
    if value is None or isinstance(value, (list, dict, str)):
        return None
    return float(value)


def is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def tail_levels(confidence: float) -> tuple[float, float]:
    """The quantile levels of a two-sided interval, from the confidence as written (0.95 -> 0.025, 0.975): in
    binary floating point (1 - 0.95) / 2 is 0.025000000000000022."""
    tail = (1 - Decimal(str(float(confidence)))) / 2
    return float(tail), float(1 - tail)


def percentile_interval(values: Iterable[float], confidence: float) -> tuple[float | None, float | None]:
    values = np.asarray(list(values), dtype=float)
    if values.size == 0:
        return None, None
    low, high = np.quantile(values, tail_levels(confidence))
    return float(low), float(high)


MIN_ITEMS = 30  # figures from fewer items are flagged "small sample" unless a reader chooses another minimum
SMALL = "small sample"


def small_sample(counts: Iterable[tuple[int | None, int, str]], why: str | None = None) -> str | None:
    """Why figures resting on these counts are a small sample ("small sample: 8 items < 30"), or None when
    every count reaches its minimum: `counts` is [(n, minimum, what)]."""
    short = [f"{n} {what} < {minimum}" for n, minimum, what in counts if n is not None and n < minimum]
    return f"{SMALL}: {', '.join(short)}" + (f" ({why})" if why else "") if short else None


def check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


@dataclass(frozen=True)
class Result:
    """Base of every result: frozen, and `to_dict()` gives JSON-ready data."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
