"""KoDialogBench as released (Hugging Face dataset seongbo/kodialogbench, read by the study's lm-eval task
code in sb-jang/kodialogbench): one file per test set, JSON lines (or a JSON array) of

{"dialogue": [[speaker_id, utterance], ...], "question": "...", "options": ["...", ...], "answer_idx": 0,
 "option_description": [[option, description], ...], "target_speaker": "2"}

as its kodialogbench/utils.py reads them: `question` for the comprehension sets, `option_description` for
the dialog-act sets, `target_speaker` for response selection. The set is named by the file (its config
name, e.g. `dc_emotion_k-ed.jsonl`, with or without the `kodialogbench_` prefix) or by a record's `task`;
it becomes the task, with the task's dimension (Topic, Emotion, Relation, Location, Dialog Act, Fact,
Response Selection) that picks the study's prompting method for it. Importing every set's file into one
benchmark gives the 21 test sets. Speakers keep the data's ids (화자N in the prompt).
"""
from pathlib import Path

from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, json_records, record_id, require
from .dialogbench import multiple_choice_form

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('KoDialogBench as released (`seongbo/kodialogbench`): one file per test set named by its config '
         '(`dc_emotion_k-ed.jsonl`, ...; or a `task` field), lines of `dialogue` (`[speaker_id, utterance]` '
         'pairs), `options`, `answer_idx`, `question`, `option_description`, `target_speaker`.')

SHAPE = 'a KoDialogBench record ("dialogue", "options", "answer_idx")'
# The released configs (the task yaml files' dataset_name), in the README's order; prefix -> dimension.
SETS = ("dc_topic_k-sns", "dc_topic_k-tdd", "dc_topic_socialdial", "dc_emotion_k-ed", "dc_emotion_dailydialog",
        "dc_emotion_empathetic", "dc_relation_socialdial-distance", "dc_relation_socialdial-relation",
        "dc_location_socialdial", "dc_dialog_act_k-tdd", "dc_dialog_act_dailydialog", "dc_fact_k-ds",
        "dc_fact_personachat", "dc_fact_empathetic", "rs_k-sns", "rs_k-tdd", "rs_k-ed", "rs_personachat",
        "rs_dailydialog", "rs_empathetic", "rs_socialdial")
DIMENSIONS = {"dc_topic": "Topic", "dc_emotion": "Emotion", "dc_relation": "Relation", "dc_location": "Location",
              "dc_dialog_act": "Dialog Act", "dc_fact": "Fact", "rs": "Response Selection"}
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def set_name(path, where, record):
    name = require(path, where, record, "task", str, optional=True, default=None) or Path(path).stem
    name = name.removeprefix("kodialogbench_")
    if name not in SETS:
        raise ImportFailure(path, where, "task", f"names no KoDialogBench test set ({name!r}); name the file after "
                                                 f"its set, one of {', '.join(SETS)}")
    return name


def dimension_of(name):
    return next(d for prefix, d in DIMENSIONS.items() if name.startswith(prefix + "_"))


def turns_of(path, where, record):
    dialogue = require(path, where, record, "dialogue", list)
    turns = []
    for index, turn in enumerate(dialogue):
        if not (isinstance(turn, list) and len(turn) == 2 and isinstance(turn[0], (str, int))
                and not isinstance(turn[0], bool) and isinstance(turn[1], str)):
            raise ImportFailure(path, where, f"dialogue[{index}]", "expected [speaker_id, utterance]")
        turns.append({"speaker": str(turn[0]), "text": turn[1]})
    if not turns:
        raise ImportFailure(path, where, "dialogue", "expected at least one turn")
    return turns


def fields_of(path, where, record, name):
    options = require(path, where, record, "options", list)
    if not 2 <= len(options) <= len(LETTERS) or not all(isinstance(o, str) for o in options):
        raise ImportFailure(path, where, "options", "expected a list of 2 or more option texts")
    fields = {"options": dict(zip(LETTERS, options, strict=False))}
    if name.startswith("rs_"):
        fields["next_speaker"] = str(require(path, where, record, "target_speaker", (str, int)))
    else:
        fields["question"] = require(path, where, record, "question", str)
    described = require(path, where, record, "option_description", list, optional=True, default=None)
    if described is not None:
        if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in described):
            raise ImportFailure(path, where, "option_description", "expected a list of [option, description]")
        fields["option_description"] = described
    return fields


def parse(path):
    items, names = [], []
    for where, record in json_records(path, SHAPE):
        name = set_name(path, where, record)
        fields = fields_of(path, where, record, name)
        answer = require(path, where, record, "answer_idx", int)
        if not 0 <= answer < len(fields["options"]):
            raise ImportFailure(path, where, "answer_idx", f"expected 0 to {len(fields['options']) - 1}, got {answer}")
        if name not in names:
            names.append(name)
        external_id = record_id(path, where, record) if record.get("id") is not None else f"{name}-{where.split()[-1]}"
        items.append(ItemRecord(name, external_id, turns_of(path, where, record), fields,
                                {"language": "ko", "set": name}, {"answer": LETTERS[answer]}, where))
    tasks = [TaskSpec(name, name, multiple_choice_form(), dimension_of(name)) for name in names]
    header = {"name": "KoDialogBench", "language": "ko", "source": "KoDialogBench (Jang et al., 2024), as released"}
    return ParsedBenchmark(Path(path), header, tasks, items)
