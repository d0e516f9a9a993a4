"""BotChat's single-dialogue figures: pass@N and utterance lengths.

A judgement of one dialogue names the first utterance it finds machine-written (its index), or
None when it finds none. Shown only the first N utterances, the dialogue passes (reads as human)
when that index is N or later: pass@N is the share of judgements that pass, a curve over N.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ._common import Result


@dataclass(frozen=True)
class PassPoint(Result):
    n: int  # utterances shown
    passed: int
    total: int
    share: float | None  # None without judgements


def pass_at_n(first_flagged: Sequence[int | None], n_values: Iterable[int]) -> list[PassPoint]:
    """pass@N for each N in `n_values`, over the judgements' first flagged indices (0-based)."""
    flagged = [f for f in first_flagged]
    if any(f is not None and (isinstance(f, bool) or not isinstance(f, int) or f < 0) for f in flagged):
        raise ValueError("first flagged indices must be non-negative integers or None")
    points = []
    for n in n_values:
        if n < 1:
            raise ValueError(f"N must be at least 1, got {n}")
        passed = sum(f is None or f >= n for f in flagged)
        points.append(PassPoint(n, passed, len(flagged), passed / len(flagged) if flagged else None))
    return points


@dataclass(frozen=True)
class LengthStats(Result):
    n: int
    mean: float | None
    std: float | None  # population standard deviation
    median: float | None
    min: int | None
    max: int | None


def length_stats(lengths: Sequence[int]) -> LengthStats:
    """Summary of utterance lengths (words or characters); None figures when there are none."""
    if not lengths:
        return LengthStats(0, None, None, None, None, None)
    values = np.asarray(lengths, dtype=float)
    return LengthStats(len(values), float(values.mean()), float(values.std()), float(np.median(values)),
                       int(values.min()), int(values.max()))


def pass_at_n_stepwise(verdicts: Sequence[dict[int, bool]], n_values: Iterable[int]) -> list[PassPoint]:
    """pass@N over judgements made at each N separately ({N: passed} per dialogue), as a judge
    shown the first N utterances answers anew at each N. Below a dialogue's first judged N it
    passes (only its human seed is shown); past its last it keeps its last verdict (it has no
    more utterances to show)."""
    points = []
    for n in n_values:
        if n < 1:
            raise ValueError(f"N must be at least 1, got {n}")
        passed = 0
        for judged in verdicts:
            shown = [m for m in judged if m <= n]
            passed += bool(judged[max(shown)]) if shown else 1
        points.append(PassPoint(n, passed, len(verdicts), passed / len(verdicts) if verdicts else None))
    return points
