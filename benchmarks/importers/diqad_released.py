"""DiQAD as released (github.com/yukunZhao/Dataset_Dialogue_quality_evaluation, README): JSON lines (or
a JSON array) of

{"label": 0 | 1 | 2, "reason": "...", "turns": "utterance#!#utterance#!#..."}

The README says: 'label': the labelled score 0, 1, 2; 'reason': the reason why label 0 or 1;
'turns': the turns of the dialogue, several separated by '#!#' (its sentence reads "the turns that
help the dialogue scored 2, with multiple reasons being separated by '#!#'"; the data files
themselves were not at hand, so this reading follows the README as far as it is clear). `turns` may
also be a list of strings. The released turns carry no speaker: they alternate user, expert, the user
first, as in DiQAD's user-expert dialogues. A `reason` naming DiQAD's reasons for its score (several
separated by '#!#' too, "less informative" or "less_informative") becomes the gold reasons; the text
as given stays in meta. Items without an `id` are named by file and line.
"""
from pathlib import Path

from .base import (
    ImportFailure,
    ItemRecord,
    ParsedBenchmark,
    TaskSpec,
    json_records,
    language_of_text,
    record_id,
    require,
)
from .diqad import REASONS, TASK_SLUG, quality_form

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('DiQAD as released (yukunZhao/Dataset_Dialogue_quality_evaluation): JSON lines of `label` (0/1/2), '
         '`reason`, `turns` (utterances separated by `#!#`, read as user and expert in turn); the language is '
         'read from the text.')

SHAPE = 'a DiQAD record as released ("label" 0/1/2, "reason", "turns" separated by "#!#")'
SEPARATOR = "#!#"
SPEAKERS = ("user", "expert")


def released_turns(path, where, record):
    raw = require(path, where, record, "turns", (str, list))
    parts = raw.split(SEPARATOR) if isinstance(raw, str) else raw
    texts = []
    for index, text in enumerate(parts):
        if not isinstance(text, str):
            raise ImportFailure(path, where, f"turns[{index}]", "expected a string")
        if text.strip():
            texts.append(text.strip())
    if not texts:
        raise ImportFailure(path, where, "turns", f"expected the dialogue's turns separated by {SEPARATOR!r}")
    return [{"speaker": SPEAKERS[i % 2], "text": text} for i, text in enumerate(texts)]


def released_label(path, where, record):
    label = require(path, where, record, "label", (int, str))
    if isinstance(label, str) and label.strip() in ("0", "1", "2"):
        return int(label)
    if label not in (0, 1, 2):
        raise ImportFailure(path, where, "label", f"expected 0, 1 or 2, got {label!r}")
    return label


def reason_codes(label, reason):
    """DiQAD's reason codes named in `reason`, or None when any part names none of them."""
    parts = [p.strip().lower().replace(" ", "_").replace("-", "_") for p in reason.split(SEPARATOR) if p.strip()]
    known = REASONS.get(label, [])
    return parts if parts and all(p in known for p in parts) else None


def parse(path):
    tasks = [TaskSpec(TASK_SLUG, "DiQAD dialogue quality", quality_form(), "quality")]
    header = {"name": "DiQAD", "language": "zh", "source": "DiQAD (Baidu), as released"}
    return ParsedBenchmark(path, header, tasks, parse_items(Path(path)))


def parse_items(path):
    for where, record in json_records(path, SHAPE):
        label = released_label(path, where, record)
        turns = released_turns(path, where, record)
        reason = require(path, where, record, "reason", str, optional=True, default="")
        external_id = record_id(path, where, record)
        gold = {"score": label}
        codes = reason_codes(label, reason)
        if codes:
            gold[f"reasons_{label}"] = codes
        meta = {"domain": require(path, where, record, "domain", str, optional=True, default=""),
                "language": language_of_text(" ".join(turn["text"] for turn in turns), default="zh"),
                "reason": reason}
        yield ItemRecord(TASK_SLUG, external_id, turns, {}, meta, gold, where)
