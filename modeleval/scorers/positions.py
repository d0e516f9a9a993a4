"""Position bias (DialogBench): score the same item with its correct answer forced
to each position, and count accuracy per position.

Options come as a sequence (positions are indices) or as a mapping keyed by letter
(positions are keys, in the mapping's order); the result has the same form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
Options = Sequence[T] | Mapping[str, T]


def _split(options: Options, gold, target=None):
    """Values in order, the keys that name positions, and gold / target as indices."""
    keys = list(options) if isinstance(options, Mapping) else list(range(len(options)))
    values = [options[k] for k in keys]
    index = {k: i for i, k in enumerate(keys)}
    if gold not in index or (target is not None and target not in index):
        raise KeyError(f"positions must be among {keys}")
    return keys, values, index[gold], None if target is None else index[target]


def _join(options: Options, keys: list, values: list):
    if isinstance(options, Mapping):
        return dict(zip(keys, values, strict=True))
    return tuple(values) if isinstance(options, tuple) else values


def permute_options(options: Options, gold, target):
    """The options with the gold one moved to `target` by swapping it with the option
    there (the others keep their places). Returns (options, new gold = target)."""
    keys, values, g, t = _split(options, gold, target)
    values[g], values[t] = values[t], values[g]
    return _join(options, keys, values), target


def circular_permutations(options: Options, gold) -> list[tuple[object, Hashable]]:
    """The n rotations of the options, the j-th with the gold answer at position j:
    each option visits each position once, and the order around the circle stays."""
    keys, values, g, _ = _split(options, gold)
    n = len(values)
    return [
        (_join(options, keys, [values[(i - j + g) % n] for i in range(n)]), keys[j]) for j in range(n)
    ]


@dataclass(frozen=True)
class PositionAccuracy:
    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else float("nan")


def accuracy_by_position(records: Iterable[tuple[Hashable, Hashable | None]]) -> dict[Hashable, PositionAccuracy]:
    """(gold position, predicted position or None for unparsable) pairs -> accuracy
    per gold position. An unparsable prediction counts as wrong."""
    correct, total = Counter(), Counter()
    for gold, predicted in records:
        total[gold] += 1
        correct[gold] += predicted == gold
    return {p: PositionAccuracy(correct[p], total[p]) for p in sorted(total, key=str)}
