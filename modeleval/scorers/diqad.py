"""DiQAD's quality question put to a model in the style of the paper's few-shot prompt (its
Appendix C): the criteria, then solved examples, each the dialogue as a JSON list of
{"role", "content"} turns followed by "score: N", then the dialogue to score. The answer is read
from the score tokens' probabilities, or generated and read back from "score: N".
"""
from __future__ import annotations

import json
import re
from typing import Sequence

INSTRUCTION = (
    "You are an expert in assessing the quality of dialogues between a user and an expert. Score the "
    "quality of the expert's answers in the dialogue:\n"
    "2: the answers meet every dimension: grammatical, relevant, consistent, empathetic, informative and "
    "proactive;\n"
    "1: the answers address the user's question but are incomplete, less informative or less proactive;\n"
    "0: the answers fail a basic dimension: no or wrong answer, not relevant, not empathetic, grammatical "
    "errors, or not consistent.\n"
    "The dialogue is a JSON list of turns with a role and a content. Answer in the form \"score: N\"."
)
PRESET = "diqad"  # settings {"preset": "diqad"} of the rating modes
SHOT = "dialogue: {context}\nscore:{answer}"
VERIFICATION_INSTRUCTION = (
    "You are an expert in assessing dialogues between a user and an expert. Does the expert's answer need "
    "to be verified against external knowledge? The dialogue is a JSON list of turns with a role and a "
    "content. Answer yes or no."
)
VERIFICATION_SHOT = "dialogue: {context}\nneeds verification:{answer}"

_SCORE = re.compile(r"score\s*[:：]?\s*(-?\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?![\d.])")


def dialogue_json(turns: Sequence[dict]) -> str:
    """The dialogue as role/content JSON: the first speaker is the user, every other speaker the
    assistant (DiQAD's dialogues are between a user and an expert)."""
    first = turns[0]["speaker"] if turns else None
    return json.dumps([{"role": "user" if t["speaker"] == first else "assistant", "content": t["text"]}
                       for t in turns], ensure_ascii=False)


def extract_score(text: str, values: Sequence[int]) -> int | None:
    """The score a reply gives: the last "score: N" with N among `values`, else the reply's only
    number among them; None when none (or several different ones) can be read."""
    stated = [int(n) for n in _SCORE.findall(text) if int(n) in values]
    if stated:
        return stated[-1]
    numbers = {int(n) for n in _NUMBER.findall(text)} & set(values)
    return numbers.pop() if len(numbers) == 1 else None
