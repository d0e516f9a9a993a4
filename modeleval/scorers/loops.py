"""BotChat's duplicate detector: a generated dialogue that starts repeating itself is looping.

Utterance j repeats when it is at least `threshold` similar to utterance j-1 or j-2 (a model
talking to itself tends to echo the other side or its own previous turn), both generated: the window
never reaches into the human seed (BotChat's DupDetect marks generated dialogues that repeat
themselves; a reply that echoes the seed is the model answering it, not a loop). The loop starts at
the first repeat, so `cut_at_loop` keeps every utterance said once. In the arena a looping dialogue
is judged without asking the judge: it is plainly machine-made. The measure and the threshold are
ours: BotChat's repository publishes no code for DupDetect, neither its measure nor its threshold.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from rapidfuzz import fuzz

from .pairwise import LOSE, TIE, WIN

DEFAULT_SIMILARITY = "char_ratio"
DEFAULT_THRESHOLD = 0.9
_WORD = re.compile(r"\w+")


def char_ratio(a: str, b: str) -> float:
    """Normalised Indel similarity of the two texts, 0..1."""
    return fuzz.ratio(a, b) / 100


def token_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the lower-cased word sets, 0..1; two texts without words are equal."""
    x, y = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(x & y) / len(x | y) if x | y else 1.0


SIMILARITIES: dict[str, Callable[[str, str], float]] = {"char_ratio": char_ratio, "token_overlap": token_overlap}


def loop_start(utterances: Sequence[str], *, similarity: str = DEFAULT_SIMILARITY,
               threshold: float = DEFAULT_THRESHOLD, first: int = 0) -> int | None:
    """Index of the first utterance that repeats one of the two before it, or None, comparing only
    utterances from `first` on (a self-chat's first generated one: its human seed is never compared)."""
    try:
        similar = SIMILARITIES[similarity]
    except KeyError:
        raise ValueError(f"similarity must be one of {sorted(SIMILARITIES)}, not {similarity!r}") from None
    for j in range(first + 1, len(utterances)):
        if any(similar(utterances[i], utterances[j]) >= threshold for i in range(max(j - 2, first), j)):
            return j
    return None


def cut_at_loop(utterances: Sequence[str], start: int | None) -> list[str]:
    """The dialogue without its repeats (unchanged when it does not loop)."""
    return list(utterances if start is None else utterances[:start])


def loop_match(a_loop: int | None, b_loop: int | None) -> str | None:
    """A's result when dialogues A and B meet, decided by looping alone: both loop -> tie, the one
    that loops loses, neither -> None (the judge decides)."""
    a, b = a_loop is not None, b_loop is not None
    if a and b:
        return TIE
    if a or b:
        return LOSE if a else WIN
    return None
