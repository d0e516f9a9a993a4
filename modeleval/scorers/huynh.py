"""Huynh et al. (2023), LLMs as dialogue raters on FED: the study's preset for the rating and yes/no modes.

- Examples are FED items rated by FED's raters: the mean of the raters' ratings, rounded half up to
  the integer scale the prompt asks for (`example_rating`); an item with no numeric rating is no
  example.
- A turn-level item is its dialogue with the rated response; a dialogue-level item is the whole
  dialogue, rated as one (never as its last turn) (`render_item`).
- Examples never come from the rated item's conversation: FED's turn items are prefixes of its
  dialogues (each turn item's context opens one of the 125 dialogues, and turn items of one
  conversation nest), so an example whose turns and the item's turns are one a prefix of the other
  is left out (`same_conversation`).
- Random selection, 3 examples, repeated over SEEDS: each seed is a prediction variant
  ("seed-N"), and reports give the mean and standard deviation of the per-seed correlations.

Rating and yes/no reading are `scorers.rating`'s (top 3 renormalised, p(yes) / (p(yes) + p(no))).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from .prompts import render_dialogue

PRESET = "huynh"
K = 3
SEEDS = (0, 1, 2, 3, 4)

RATING_INSTRUCTION = "Rate the {quality} on a scale from {low} to {high}."
YES_NO_INSTRUCTION = "Answer yes or no."
# {context} is the rendered item (`render_item`): dialogue, then the rated response at turn level.
RATING_SHOT = "{context}\n{quality} score:{answer}"
YES_NO_SHOT = "{context}\nIs it {quality}?{answer}"


def seed_variant(seed: int) -> str:
    return f"seed-{seed}"


def example_rating(ratings: Iterable) -> int | None:
    """The mean of the numeric ratings, rounded half up (2.5 -> 3: Python's round would give 2);
    None without any."""
    values = [r for r in ratings if isinstance(r, (int, float)) and not isinstance(r, bool) and not math.isnan(r)]
    if not values:
        return None
    return math.floor(sum(values) / len(values) + 0.5)


def _key(turn: Mapping) -> tuple[str, str]:
    return (str(turn.get("speaker", "")).strip(), str(turn.get("text", "")).strip())


def item_turns(dialogue: Sequence[Mapping], response: Mapping | None) -> list[tuple[str, str]]:
    return [_key(t) for t in dialogue] + ([_key(response)] if response else [])


def same_conversation(a: Sequence, b: Sequence) -> bool:
    """One item's dialogue (without its rated response) opens the other's: the same conversation."""
    shorter, longer = sorted((list(a), list(b)), key=len)
    return bool(shorter) and longer[: len(shorter)] == shorter


def render_item(dialogue: Sequence[Mapping], response: Mapping | None) -> str:
    text = "Dialogue:\n" + render_dialogue(dialogue)
    if response:
        text += f"\nResponse: {response['speaker']}: {response['text']}"
    return text
