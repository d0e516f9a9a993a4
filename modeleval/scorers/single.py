"""BotChat single-dialogue judgement: a judge reads the first N utterances of a dialogue and says
whether any is machine-written and, if so, the first one. Asked at every N, the verdicts give
pass@N; a looping dialogue fails from its loop start on without asking, as with the loop detector."""

from __future__ import annotations

import re
from collections.abc import Sequence

from studies.vocabulary import NO, YES

from . import prompts

_YES = re.compile(r"\byes\b", re.IGNORECASE)
_NO = re.compile(r"\bno\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


def render_numbered(utterances: Sequence[str], speakers: Sequence[str] = ("A", "B")) -> str:
    """"1. A: text" per utterance, numbered from 1 as people count."""
    return "\n".join(f"{i + 1}. {speakers[i % 2]}: {text}" for i, text in enumerate(utterances))


def single_prompt(utterances: Sequence[str], n: int, template: str = prompts.SINGLE_AI_JUDGE) -> str:
    return template.format(dialogue=render_numbered(utterances[:n]))


def parse_single(text: str, n: int) -> tuple[str | None, int | None]:
    """(verdict, index): "yes" / "no" / None and, after a yes, the 0-based index of the first
    utterance named (None when no number in 1..n follows). The first line that says yes or no
    decides, as judges tend to answer first and explain after; a line saying both is no verdict."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        yes, no = _YES.search(line), _NO.search(line)
        if bool(yes) == bool(no):
            continue
        if no:
            return NO, None
        # The number may follow on the same line or the next ("Yes.\nUtterance 3 ...").
        after = line[yes.end():] + "\n" + "\n".join(lines[number + 1:number + 2])
        found = _NUMBER.search(after)
        index = int(found.group()) - 1 if found else None
        return YES, index if index is not None and 0 <= index < n else None
    return None, None


def asked_range(length: int, seed: int, loop_start: int | None) -> tuple[range, range]:
    """(N the judge is asked at, N decided by the loop): from the first utterance after the seed to
    the dialogue's length; a looping dialogue is asked only while its first N hold no repeat."""
    last = length if loop_start is None else min(loop_start, length)
    return range(seed + 1, last + 1), range(max(last, seed) + 1, length + 1)
