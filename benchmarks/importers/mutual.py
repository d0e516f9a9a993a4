"""MuTual test dialogues as BotChat uses them (PROTOCOLS.md section 4): one JSON object a line,
{"id": "MT-1", "utterances": ["...", "...", ...]}.

Imported as real human dialogues (task `human-dialogue`), under the same single-dialogue
judgement as generated ones, so that human and judge verdicts on real dialogues give the ground
truth to compare self-chats with. Speakers alternate, A first. The same file gives self-chat its
seeds (`dialogues`).
"""
from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, json_lines, require

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('JSON lines: `id, utterances` (MuTual dialogues, speakers A and B in turn).')

TASK_SLUG = "human-dialogue"
SPEAKERS = ("A", "B")

# BotChat (a): is any utterance AI-written, from which one, and why.
JUDGEMENT_FORM = {
    "primary": "is_ai",
    "questions": [
        {"key": "is_ai", "type": "boolean", "label": "Is any utterance machine-written?"},
        {"key": "first_ai_turn", "type": "index", "label": "The first machine-written utterance",
         "shown_if": {"key": "is_ai", "in": [True]}},
        {"key": "reason", "type": "text", "label": "Why?", "required": False},
    ],
}
JUDGEMENT_INSTRUCTIONS = ("Read the whole dialogue. Say whether any utterance was written by a machine and, if so, "
                          "which is the first one.")


def turns(utterances):
    return [{"speaker": SPEAKERS[i % 2], "text": text} for i, text in enumerate(utterances)]


def dialogues(path):
    """Yield (location, id, utterances), checked: a string id and at least 2 non-empty strings."""
    for number, record in json_lines(path):
        where = f"line {number}"
        dialogue_id = require(path, where, record, "id", str)
        utterances = require(path, where, record, "utterances", list)
        if len(utterances) < 2 or not all(isinstance(u, str) and u.strip() for u in utterances):
            raise ImportFailure(path, where, "utterances", "expected at least 2 non-empty strings")
        yield where, dialogue_id, utterances


def parse(path):
    tasks = [TaskSpec(TASK_SLUG, "Real dialogue: is any utterance machine-written?", JUDGEMENT_FORM, "humanness",
                      JUDGEMENT_INSTRUCTIONS)]
    header = {"name": "MuTual test dialogues (BotChat seeds)", "language": "en",
              "source": "MuTual test split, as published with BotChat", "licence": "research use"}
    items = (ItemRecord(TASK_SLUG, dialogue_id, turns(utterances), {},
                        {"language": "en", "n_utterances": len(utterances)}, {"is_ai": False}, where)
             for where, dialogue_id, utterances in dialogues(path))
    return ParsedBenchmark(path, header, tasks, items)
