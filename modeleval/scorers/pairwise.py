"""BotChat arena: a judge reads two conversations and names the one that involves
an AI (1, 2, both, neither). Each pair is judged in both orders, and the two
verdicts combine into win / tie / lose for conversation A's model."""

from __future__ import annotations

import re

from studies.vocabulary import ANSWER_TEXT, BOTH, LOSE, NEITHER, ONE, TIE, TWO, WIN, outcome

from . import prompts

_BOTH = re.compile(r"\bboth\b|两个都|都是", re.IGNORECASE)
_NEITHER = re.compile(r"\b(?:neither|none)\b|都不是|都没有", re.IGNORECASE)
_NAMED = re.compile(r"conversation\s*#?\s*(1|2|one|two)\b|对话\s*([12一二])", re.IGNORECASE)
_BARE = re.compile(r"(?<![\w.])([12])(?![\w.])")
_NUMBER = {"1": ONE, "one": ONE, "一": ONE, "2": TWO, "two": TWO, "二": TWO}


def shot_text(conversation_1: str, conversation_2: str, label: str, template: str = prompts.PAIRWISE_AI_JUDGE):
    """A solved example: the question with its answer, then the separator before the next block."""
    return template.format(conversation_1=conversation_1, conversation_2=conversation_2) + " " + \
        ANSWER_TEXT[label] + prompts.SHOT_SEPARATOR


def pairwise_prompts(conversation_a: str, conversation_b: str, template: str = prompts.PAIRWISE_AI_JUDGE,
                     shots: str = ""):
    """(A shown first, B shown first): the same pair in both orders, after the same solved examples."""
    return (
        shots + template.format(conversation_1=conversation_a, conversation_2=conversation_b),
        shots + template.format(conversation_1=conversation_b, conversation_2=conversation_a),
    )


def _line_label(line: str) -> str | None:
    both, neither = bool(_BOTH.search(line)), bool(_NEITHER.search(line))
    if both != neither:
        return BOTH if both else NEITHER
    if both:
        return None
    named = {_NUMBER[(a or b).lower()] for a, b in _NAMED.findall(line)}
    if not named:
        named = set(_BARE.findall(line))
    return named.pop() if len(named) == 1 else None


def parse_pairwise(text: str) -> str | None:
    """"1", "2", "both", "neither", or None. The first line that gives a verdict
    decides, as judges tend to answer first and explain after; a line naming both
    conversations without "both"/"neither" is no verdict."""
    for line in text.splitlines():
        if label := _line_label(line):
            return label
    return None


def combine_orders(label_ab: str | None, label_ba: str | None, rule: str = "consistent", picked_loses: bool = True):
    """Win / tie / lose for A from the two orders, or None if either verdict is
    unreadable. "consistent": a win or loss only when both orders agree, else a tie
    (discounts position bias). "sum": +1/0/-1 per order, the sign of the total."""
    first, second = outcome(label_ab, 1, picked_loses), outcome(label_ba, 2, picked_loses)
    if first is None or second is None:
        return None
    if rule == "consistent":
        return first if first == second else TIE
    if rule == "sum":
        total = sum({WIN: 1, TIE: 0, LOSE: -1}[o] for o in (first, second))
        return WIN if total > 0 else LOSE if total < 0 else TIE
    raise ValueError(f"rule must be 'consistent' or 'sum', not {rule!r}")
