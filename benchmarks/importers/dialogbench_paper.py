"""DialogBench items as its paper's generation prompts ask GPT-4 to write them (Ou et al., 2023,
appendix): a JSON array or JSON lines of

{"task": "Emotion Detection",                   # display name, or the released code's name; else the file's name
 "id": "...", "domain": "...",                   # optional
 "speaker1 personality": "...", "speaker2 personality": "...",
 "dialogue": [{"speaker1": "...", "speaker2": "..."}, ..., {"speaker1": "..."}],  # the last turn: speaker1's only
 "option": {"A": "...", ...} or {"1": "...", ...} (read as A..) or values {"text": "..."},
 "label": "B" (or "2" with numeric keys), "analysis": "...",
 task extras: test_question, knowledge, commonsense, premise, hypothesis, response, persona, slot, emotion(s)}

Items of the same tasks as the `dialogbench` format, the analysis kept in meta.
"""
from pathlib import Path

from .base import ImportFailure, ItemRecord, json_records, language_of_text, parse_speaker_lines, record_id, require
from .dialogbench import named_task, published_benchmark, published_name, published_options, published_task

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ("DialogBench as its paper's generation prompts print an item (a JSON array or JSON lines): `speaker1 "
         'personality`, `speaker2 personality`, `dialogue` as `[{"speaker1": ..., "speaker2": ...}, ...]`, '
         "`option`, `label`, `analysis`, task extras, `task` by name (else the file's name).")

SHAPE = ('a DialogBench item as printed in the paper ("speaker1 personality", "speaker2 personality", '
         '"dialogue", "option", "label")')
SPEAKERS = ("speaker1", "speaker2")
EXTRAS = ("test_question", "knowledge", "commonsense", "premise", "hypothesis", "response", "persona", "slot",
          "emotion", "emotions")


def paper_turns(path, where, dialogue):
    """[{"speaker1": ..., "speaker2": ...}, ...] as {speaker, text} turns; only the last may lack speaker2."""
    if not isinstance(dialogue, list) or not dialogue:
        raise ImportFailure(path, where, "dialogue", 'expected a non-empty list of {"speaker1": ..., "speaker2": ...} '
                                                     'turns')
    if all(isinstance(turn, str) for turn in dialogue):
        return parse_speaker_lines(path, where, dialogue)
    turns = []
    for index, turn in enumerate(dialogue):
        key = f"dialogue[{index}]"
        last = index == len(dialogue) - 1
        if not isinstance(turn, dict) or not turn:
            raise ImportFailure(path, where, key, 'expected {"speaker1": string, "speaker2": string}')
        if unknown := sorted(set(turn) - set(SPEAKERS)):
            raise ImportFailure(path, where, key, f"unexpected keys {unknown}; a turn holds speaker1 and speaker2")
        wanted = ("speaker1",) if last and "speaker2" not in turn else SPEAKERS
        for speaker in wanted:
            text = turn.get(speaker)
            if not isinstance(text, str) or not text.strip():
                only = "" if last else " (only the last turn may hold speaker1 alone)"
                raise ImportFailure(path, where, f"{key}.{speaker}", f"expected a non-empty string{only}")
            turns.append({"speaker": speaker, "text": text})
    return turns


def parse_published(path, shape, source, read, task=None):
    """Items of a published DialogBench shape. `read(path, where, record)` gives the record's
    (turns, name of its option field, fields of its own, meta of its own); options, label, task
    extras, domain and id are read here alike for every shape."""
    path = Path(path)
    items, tasks_seen = [], {}
    named = named_task(path, task) if task else None
    named_as = task
    for where, record in json_records(path, shape):
        task = published_task(path, where, record, path.stem, named)
        turns, option_key, own_fields, own_meta = read(path, where, record)
        options, label = published_options(path, where, record, option_key)
        fields = {"options": options, **own_fields,
                  **{extra: record[extra] for extra in EXTRAS if record.get(extra) not in (None, "")}}
        meta = {"domain": require(path, where, record, "domain", str, optional=True, default=""), **own_meta}
        tasks_seen.setdefault(task, set()).add(published_name(record, path.stem, named_as))
        items.append(ItemRecord(task, record_id(path, where, record), turns, fields, meta, {"answer": label}, where))
    return published_benchmark(path, tasks_seen, items, source)


def read_paper_record(path, where, record):
    turns = paper_turns(path, where, require(path, where, record, "dialogue", list))
    personality = {}
    for speaker in SPEAKERS:
        value = require(path, where, record, f"{speaker} personality", str, optional=True)
        if value is not None:
            personality[speaker] = value
    meta = {"personality": personality,
            "language": require(path, where, record, "language", str, optional=True)
            or language_of_text(" ".join(t["text"] for t in turns))}
    analysis = require(path, where, record, "analysis", str, optional=True)
    if analysis is not None:
        meta["analysis"] = analysis
    return turns, "option", {}, meta


NAMED_TASK = True  # a file of one task may be given its task's name (import_items --task)


def parse(path, task=None):
    return parse_published(path, SHAPE, "DialogBench (Ou et al., 2023), the paper's item shape", read_paper_record,
                           task)
