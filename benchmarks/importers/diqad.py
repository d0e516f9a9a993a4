"""DiQAD-shaped dialogues (PROTOCOLS.md section 1): one JSON object per line.

{"id": "...", "dialogue": [{"speaker": "user", "text": "..."}, ...] or ["user: ...", ...],
 "label": 2 | 1 | 0, "reasons": ["incomplete", ...], "needs_verification": 0 | 1, "domain": "legal"}
"""
from .base import (ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, check_turns, json_lines, language_of_text,
                   parse_speaker_lines, require)

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('JSON lines: `id, dialogue, label (0/1/2), reasons, needs_verification (0/1), domain`.')

DOMAINS = ("emotion", "digital", "legal", "education", "car", "finance")
REASONS = {
    1: ["incomplete", "less_informative", "less_proactive", "none"],
    0: ["no_or_wrong_answer", "not_relevant", "not_empathetic", "grammatical_error", "not_consistent", "none"],
}
TASK_SLUG = "diqad-quality"


def quality_form():
    return {
        "primary": "score",
        "questions": [
            {"key": "needs_verification", "type": "boolean",
             "label": "Does the answer need verification against external knowledge?"},
            {"key": "score", "type": "single_choice", "label": "Quality", "options": [
                {"value": 2, "label": "2: meets all dimensions"},
                {"value": 1, "label": "1: answers but lacks proactivity or informativeness"},
                {"value": 0, "label": "0: fails a basic dimension (grammar, relevance, consistency, empathy)"},
                {"value": -1, "label": "-1: private data in the response", "excludes": True},
                {"value": -2, "label": "-2: private data in the question", "excludes": True},
                {"value": "abandon", "label": "Abandon: phone number", "excludes": True},
            ]},
            {"key": "reasons_1", "type": "multi_choice", "label": "Why 1?", "shown_if": {"key": "score", "in": [1]},
             "options": [{"value": r, "label": r.replace("_", " ")} for r in REASONS[1]]},
            {"key": "reasons_0", "type": "multi_choice", "label": "Why 0?", "shown_if": {"key": "score", "in": [0]},
             "options": [{"value": r, "label": r.replace("_", " ")} for r in REASONS[0]]},
        ],
    }


def parse(path):
    tasks = [TaskSpec(TASK_SLUG, "DiQAD dialogue quality", quality_form(), "quality")]
    header = {"name": "DiQAD", "language": "zh", "source": "DiQAD (Baidu)"}
    # Items are parsed as the importer consumes them: large files stream into the database.
    return ParsedBenchmark(path, header, tasks, parse_items(path))


def parse_items(path):
    for number, record in json_lines(path):
        where = f"line {number}"
        external_id = require(path, where, record, "id", (str, int))
        raw_turns = require(path, where, record, "dialogue", list)
        turns = check_turns(path, where, raw_turns) if raw_turns and isinstance(raw_turns[0], dict) else parse_speaker_lines(path, where, raw_turns)
        label = require(path, where, record, "label", int)
        if label not in (0, 1, 2):
            raise ImportFailure(path, where, "label", f"expected 0, 1 or 2, got {label}")
        reasons = require(path, where, record, "reasons", list, optional=True, default=[])
        if label == 2 and reasons:
            raise ImportFailure(path, where, "reasons", "expected no reasons for a score of 2")
        for reason in reasons:
            if label in REASONS and reason not in REASONS[label]:
                raise ImportFailure(path, where, "reasons", f"expected reasons from {REASONS[label]} for score {label}, got {reason!r}")
        gold = {"score": label}
        if label in REASONS:
            gold[f"reasons_{label}"] = reasons or ["none"]
        needs = record.get("needs_verification")
        if needs is not None:
            if needs not in (0, 1) or isinstance(needs, bool):
                raise ImportFailure(path, where, "needs_verification", f"expected 0 or 1, got {needs!r}")
            gold["needs_verification"] = bool(needs)
        domain = require(path, where, record, "domain", str, optional=True, default="")
        # The record's language, else its text's (a DiQAD-shaped file may hold English dialogues too).
        meta = {"domain": domain, "language": record.get("language") or language_of_text(" ".join(t["text"] for t in turns))}
        yield ItemRecord(TASK_SLUG, str(external_id), turns, {}, meta, gold, where)
