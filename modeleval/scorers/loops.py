"""BotChat's duplicate detector (DupDetect): a generated dialogue that starts repeating itself is looping.

The paper's rule (section 3.2): the i-th utterance is compared with the i+1-th and the i+2-th for
2 < i < MaxRound - 1 (numbered from 1, MaxRound the dialogue's length), so the window never reaches into
the two utterances of the human seed and the last two utterances are never compared with each other; when
a similarity passes the threshold the dialogue has entered a loop, and everything up to that point, the
utterance that triggered the detector included, is the non-looping dialogue. `loop_start` is the index of
that triggering utterance (the first that repeats one of the two before it) and `cut_at_loop` keeps the
dialogue through it. In the arena a looping dialogue loses without asking the judge, both looping is a tie.
The measure and the threshold are ours: neither the paper nor its repository publishes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rapidfuzz import fuzz

from studies.vocabulary import LOSE, TIE, WIN

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
    """Index of the utterance that triggers the detector, or None: utterance i (from `first`, a self-chat's
    first generated one, on) compared with i + 1, then i + 2, for every i but the last two, as the paper
    bounds it (2 < i < MaxRound - 1 with `first` the seed's 2 utterances)."""
    try:
        similar = SIMILARITIES[similarity]
    except KeyError:
        raise ValueError(f"similarity must be one of {sorted(SIMILARITIES)}, not {similarity!r}") from None
    for i in range(first, len(utterances) - 2):
        for j in (i + 1, i + 2):
            if similar(utterances[i], utterances[j]) >= threshold:
                return j
    return None


def cut_at_loop(utterances: Sequence[str], start: int | None) -> list[str]:
    """The non-looping dialogue: through the utterance that triggered the detector (unchanged when it does
    not loop)."""
    return list(utterances if start is None else utterances[:start + 1])


def loop_match(a_loop: int | None, b_loop: int | None) -> str | None:
    """A's result when dialogues A and B meet, decided by looping alone: both loop -> tie, the one
    that loops loses, neither -> None (the judge decides)."""
    a, b = a_loop is not None, b_loop is not None
    if a and b:
        return TIE
    if a or b:
        return LOSE if a else WIN
    return None
