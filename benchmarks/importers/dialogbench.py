"""DialogBench items (PROTOCOLS.md section 2): one JSON object per line.

{"id": "...", "task": "emotion_detection", "domain": "...",
 "speaker1_personality": "...", "speaker2_personality": "...",   # or "personality": {...}
 "dialogue": ["speaker1: ...", "speaker2: ..."] or [{"speaker", "text"}],
 "question": "...",                                                 # optional
 "options": {"A": "...", "B": "...", ...}, "label": "B",
 optional extras: knowledge, commonsense, persona, premise, hypothesis, response, slot, test_question}
One task per DialogBench task; the label becomes the item's source gold.
"""
from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, check_turns, json_lines, parse_speaker_lines, require

TASKS = {
    # slug: (name, dimension)
    "knowledge_grounded_response_generation": ("Knowledge-grounded response generation", "correctness"),
    "intent_classification": ("Intent classification", "correctness"),
    "slot_filling": ("Slot filling", "correctness"),
    "emotion_detection": ("Emotion detection", "correctness"),
    "personality_grounded_response_generation": ("Personality-grounded response generation", "consistency"),
    "multi_turn_response_generation": ("Multi-turn response generation", "coherence"),
    "dialogue_summarization": ("Dialogue summarization", "correctness"),
    "commonsense_aware_response_generation": ("Commonsense-aware response generation", "coherence"),
    "dialogue_infilling": ("Dialogue infilling", "coherence"),
    "offensive_detection": ("Offensive detection", "safety"),
    "dialogue_nli": ("Dialogue natural language inference", "consistency"),
    "relation_classification": ("Relation classification", "correctness"),
}
EXTRAS = ("knowledge", "commonsense", "persona", "premise", "hypothesis", "response", "slot", "test_question")
OPTION_LETTERS = "ABCDEFGHIJ"


def multiple_choice_form():
    return {
        "primary": "answer",
        "questions": [{"key": "answer", "type": "single_choice", "label": "Choose the best option", "options": "item"}],
    }


def parse(path):
    items, tasks_seen = [], {}
    for number, record in json_lines(path):
        where = f"line {number}"
        external_id = require(path, where, record, "id", (str, int))
        task = require(path, where, record, "task", str)
        if task not in TASKS:
            raise ImportFailure(path, where, "task", f"expected one of {sorted(TASKS)}, got {task!r}")
        raw_turns = require(path, where, record, "dialogue", list)
        turns = check_turns(path, where, raw_turns) if raw_turns and isinstance(raw_turns[0], dict) else parse_speaker_lines(path, where, raw_turns)
        options = require(path, where, record, "options", dict)
        if len(options) < 2:
            raise ImportFailure(path, where, "options", f"expected at least 2 options keyed A.., got {len(options)}")
        expected_keys = list(OPTION_LETTERS[: len(options)])
        if sorted(options) != expected_keys:
            raise ImportFailure(path, where, "options", f"expected keys {expected_keys}, got {sorted(options)}")
        for key, text in options.items():
            if not isinstance(text, str) or not text.strip():
                raise ImportFailure(path, where, f"options.{key}", "expected a non-empty string")
        label = require(path, where, record, "label", str)
        if label not in options:
            raise ImportFailure(path, where, "label", f"expected one of the option keys {expected_keys}, got {label!r}")
        personality = record.get("personality") or {
            speaker: record[f"{speaker}_personality"] for speaker in ("speaker1", "speaker2") if f"{speaker}_personality" in record
        }
        if not isinstance(personality, dict):
            raise ImportFailure(path, where, "personality", "expected an object keyed by speaker")
        fields = {"options": {k: options[k] for k in expected_keys}}
        if record.get("question") is not None:
            fields["question"] = require(path, where, record, "question", str)
        for extra in EXTRAS:
            if record.get(extra) is not None:
                fields[extra] = record[extra]
        meta = {"domain": require(path, where, record, "domain", str, optional=True, default=""), "personality": personality}
        if record.get("language"):
            meta["language"] = require(path, where, record, "language", str)
        tasks_seen.setdefault(task, None)
        items.append(ItemRecord(task, str(external_id), turns, fields, meta, {"answer": label}, where))
    tasks = [TaskSpec(slug, TASKS[slug][0], multiple_choice_form(), TASKS[slug][1]) for slug in tasks_seen]
    return ParsedBenchmark(path, {"name": "DialogBench", "source": "DialogBench (Ou et al., 2023)"}, tasks, items)
