"""DialogBench as its released evaluation code reads it (github.com/kwai/DialogBench, src/evaluate.py
and src/baseEval.py): one JSON-lines file per task, named by the task ("Emotion_Classification.json",
"emotion_1012.json", ...), each line

{"prompt_pretrain": "...", "prompt_SFT": "...", "choices": {"A": "...", ...}, "label": "B",
 optional: "id", "domain", "task", "dialogue", task extras}

A JSON array of the same objects is read too. The two prompts are kept as the item's fields
`prompt_SFT` and `prompt_pretrain`: the `dialogbench` prompt preset asks the model exactly them; they are
written for models and no person is shown them (benchmarks.models.MODEL_FIELDS).
The dialogue shown to people is the record's `dialogue` when it has one, else the text the
pretrain prompt holds after 【Dialogue content】 (【对话内容】), else the SFT prompt's text before its
instruction ("Based on the content of the above dialogue" / "基于以上对话内容").
"""
import re

from ..models import MODEL_FIELDS
from .base import ImportFailure, language_of_text, require
from .dialogbench_paper import paper_turns, parse_published

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('DialogBench as its released code reads it (kwai/DialogBench): one file per task, lines of '
         "`prompt_pretrain, prompt_SFT, choices, label`; the task is the file's name "
         '(`Emotion_Classification.json`, ...), a `task` field, or the task named on this page.')

SHAPE = 'a DialogBench record of its released code ("prompt_pretrain", "prompt_SFT", "choices", "label")'
PROMPTS = MODEL_FIELDS  # kept for the model runs, never shown to people (benchmarks.models.shown_fields)
CONTENT = re.compile(r"【(?:Dialogue content|对话内容)】(.*?)【", re.S)
SFT_INSTRUCTION = re.compile(r"Based on the content of the above dialogue|基于以上对话内容")
SPEAKER_LINE = re.compile(r"^\s*([^:：\n]{1,40}?)\s*[:：]\s*(.*)$")
# The parts of a prompt (config/prompt.json) that hold the item's own content, by the field they fill; people are
# shown them as those fields, since they are never shown the prompts. A part is the text after its 【heading】 up
# to the next heading (the headings at the end, 【Answer】, 【Reply】 with nothing after it, are for the model's
# answer).
PROMPT_PARTS = {"test_question": ("Question", "提问"), "knowledge": ("Knowledge", "知识"),
                "persona": ("Persona", "人物性格"), "hypothesis": ("Hypothesis", "假设"), "response": ("Reply", "回复")}
PART = re.compile(r"【({})】([^【]*)(?=【)".format("|".join(name for names in PROMPT_PARTS.values() for name in names)))
FIELD_OF_PART = {name: field for field, names in PROMPT_PARTS.items() for name in names}


def dialogue_text(record):
    """The dialogue part of the record's prompts, or None."""
    if match := CONTENT.search(record.get("prompt_pretrain") or ""):
        return match.group(1)
    sft = record.get("prompt_SFT") or ""
    if match := SFT_INSTRUCTION.search(sft):
        return sft[: match.start()]
    return None


def prompt_parts(record):
    """{field: text} of the content parts the record's prompts hold (pretrain first, then SFT), fields the record
    does not give itself."""
    parts = {}
    for key in ("prompt_pretrain", "prompt_SFT"):
        for heading, text in PART.findall(record.get(key) or ""):
            field = FIELD_OF_PART[heading]
            if text.strip() and record.get(field) in (None, ""):
                parts.setdefault(field, text.strip())
    return parts


def text_turns(text):
    """"speaker: text" lines as turns; a line without a speaker continues the turn before it."""
    turns = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = SPEAKER_LINE.match(line)
        if match and match.group(2).strip():
            turns.append({"speaker": match.group(1).strip(), "text": match.group(2).strip()})
        elif turns:
            turns[-1]["text"] += "\n" + line.strip()
        else:
            turns.append({"speaker": "", "text": line.strip()})
    return turns


def read_released_record(path, where, record):
    prompts = {key: require(path, where, record, key, str, optional=True) for key in PROMPTS}
    if not any(prompts.values()):
        raise ImportFailure(path, where, "prompt_SFT", "missing; a record needs prompt_SFT or prompt_pretrain")
    if record.get("dialogue") is not None:
        turns = paper_turns(path, where, record["dialogue"])
    else:
        text = dialogue_text(record)
        turns = text_turns(text) if text else []
        if not turns:
            raise ImportFailure(path, where, "prompt_pretrain", "expected the dialogue after 【Dialogue content】 "
                                "(【对话内容】), or in prompt_SFT before its instruction, or a 'dialogue' field")
    fields = {**{key: value for key, value in prompts.items() if value}, **prompt_parts(record)}
    return turns, "choices", fields, {"language": language_of_text(next(iter(fields.values())))}


NAMED_TASK = True  # a file not named after its task is given the task's name (import_items --task)


def parse(path, task=None):
    return parse_published(path, SHAPE, "DialogBench (Ou et al., 2023), its released evaluation files",
                           read_released_record, task)
