"""Label Studio's project export ("JSON" in its Export menu): a JSON array of tasks, each with `id`, `data`,
`annotations` (`completed_by`, `was_cancelled`, `result`: a list of `{from_name, to_name, type, value}`) and
`predictions` (`model_version`, `score`, `result`). Both ways: this module reads such a file as items, the people's
labels (annotation.importers) and the models' picks (modeleval.verdicts), and holds the one mapping between a
question of our answer form and a Label Studio control that the campaign export (reports.labelstudio) writes with.

A task written by our export carries the item as we store it under `data.hb` (task, external id, dialogue, fields,
meta, source gold and the task's form), so a round trip keeps every item exactly. A task from any other Label
Studio project is read as one item of the task `labelstudio`: its id is the external id, its dialogue `data.dialogue`
(a list of `{speaker, text}`, or text of "speaker: text" lines) or else `data.text`, its other data keys its fields;
the form is read from the results the file holds (Choices: a single choice, a multiple one where any result picks
more than one; Rating: a scale from 1; Number: a scale over the numbers given; TextArea: text; Pairwise: left or
right), every question optional.

Each annotator stays apart, known by `completed_by` (Label Studio's user id, or an object with its `id`); a
cancelled (skipped) annotation is no label. A result for a control the form lacks, a value of the wrong type, a
second annotation by the same person on a task, or an annotation without its annotator refuses the whole file.
"""
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from django.core.exceptions import ValidationError

from ..formschema import CHOICE_TYPES, option_values, validate_answers, validate_form
from .base import (
    ImportFailure,
    ItemRecord,
    ParsedBenchmark,
    TaskSpec,
    check_turns,
    json_array,
    language_of_text,
    parse_speaker_lines,
)

FORMAT_SHAPE = ('a Label Studio project export (its JSON): a list of tasks with `data`, `annotations` '
                '(`completed_by`, `result` of Choices, Rating, Number, TextArea or Pairwise) and `predictions`; each '
                'annotator\'s labels come in apart, each model version\'s predictions as an imported run.')
CARRIES_LABELS = True
CARRIES_PREDICTIONS = True
TASK_SLUG = "labelstudio"
HB = "hb"  # the data key under which our export keeps the item as stored
PAIRWISE = ("left", "right")
BOOLEAN_CHOICES = {"true": True, "false": False}
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,100}")
DIALOGUE, SECOND = "dialogue", "conversation_2"  # the object tags' names (SECOND: a pairwise item's other dialogue)


@dataclass
class Label:
    annotator: str  # Label Studio's user id, as text
    answers: dict
    location: str


@dataclass
class Task:
    record: ItemRecord
    labels: list = field(default_factory=list)  # [Label]
    predictions: list = field(default_factory=list)  # [(model_version, answers, location)]
    cancelled: int = 0


def is_export(record):
    """A first record that looks like a task of a Label Studio export."""
    return isinstance(record, dict) and isinstance(record.get("data"), dict) and (
        "annotations" in record or "predictions" in record)


# ---- the mapping: a question of our form <-> a Label Studio control ---------------------------------------------

def is_pairwise(question):
    return (question["type"] == "single_choice" and isinstance(question.get("options"), list)
            and sorted(str(o["value"]) for o in question["options"]) == list(PAIRWISE))


def control_xml(question, choices, *, pairwise_to):
    """The control tag of a question. `choices`: [(value as Label Studio stores it, label shown)] of a choice
    question (the item's option keys where options come with the item); `pairwise_to`: the two object names a
    Pairwise control compares, or None when the items hold one dialogue."""
    key, label = quoteattr(question["key"]), question.get("label") or question["key"]
    required = "true" if question.get("required", True) and not question.get("shown_if") else "false"
    head = f'  <Header value={quoteattr(label)}/>\n'
    qtype = question["type"]
    if is_pairwise(question) and pairwise_to:
        return head + f'  <Pairwise name={key} toName={quoteattr(",".join(pairwise_to))}/>\n'
    if qtype in CHOICE_TYPES or qtype == "boolean":
        mode = "multiple" if qtype == "multi_choice" else "single-radio"
        tags = "".join(f'    <Choice value={quoteattr(shown)} alias={quoteattr(stored)}/>\n'
                       for stored, shown in choices)
        return (head + f'  <Choices name={key} toName="{DIALOGUE}" choice="{mode}" required="{required}">\n{tags}'
                       '  </Choices>\n')
    if qtype == "scale" and question["scale"]["min"] == 1:
        return head + f'  <Rating name={key} toName="{DIALOGUE}" maxRating="{question["scale"]["max"]}" ' \
                      f'required="{required}"/>\n'
    if qtype == "scale":
        return head + (f'  <Number name={key} toName="{DIALOGUE}" min="{question["scale"]["min"]}" '
                       f'max="{question["scale"]["max"]}" required="{required}"/>\n')
    if qtype == "index":
        return head + f'  <Number name={key} toName="{DIALOGUE}" min="0" required="{required}"/>\n'
    return head + f'  <TextArea name={key} toName="{DIALOGUE}" rows="3" maxSubmissions="1" required="{required}"/>\n'


def choice_list(question, option_keys=()):
    """[(stored value, shown label)] of a choice or yes/no question; `option_keys`: the option keys the items
    give where a question's options come with each item."""
    if question["type"] == "boolean":
        return [("true", "yes"), ("false", "no")]
    if question.get("options") == "item":
        return [(str(k), str(k)) for k in option_keys]
    return [(str(o["value"]), f'{o["value"]}: {o["label"]}' if o.get("label") not in (None, "", str(o["value"]))
             else str(o["value"])) for o in question["options"]]


def result_of(question, value, *, pairwise_to):
    """The Label Studio result ({from_name, to_name, type, value}) of one answer."""
    key, qtype = question["key"], question["type"]
    if is_pairwise(question) and pairwise_to:
        # to_name: the first of the two objects, as Label Studio's own validation of results reads a Pairwise one.
        return {"from_name": key, "to_name": pairwise_to[0], "type": "pairwise", "value": {"selected": str(value)}}
    base = {"from_name": key, "to_name": DIALOGUE}
    if qtype in CHOICE_TYPES or qtype == "boolean":
        picked = value if qtype == "multi_choice" else [value]
        return {**base, "type": "choices", "value": {"choices": [str(v).lower() if isinstance(v, bool) else str(v)
                                                                 for v in picked]}}
    if qtype == "scale" and question["scale"]["min"] == 1 and isinstance(value, int):
        return {**base, "type": "rating", "value": {"rating": value}}
    if qtype in ("scale", "index"):
        return {**base, "type": "number", "value": {"number": value}}
    return {**base, "type": "textarea", "value": {"text": [value]}}


def _number(path, where, value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ImportFailure(path, where, name, f"expected a number, got {type(value).__name__}")
    return int(value) if isinstance(value, float) and value.is_integer() else value


def answer_of(path, where, question, result, item_fields):
    """The answer a result gives to its question, type-checked (the form's own rules follow in validate_answers)."""
    kind, value = result["type"], result["value"]

    def part(name, expected, said):
        if name not in value:
            raise ImportFailure(path, where, f"value.{name}", f"missing; a {kind} result holds it")
        got = value[name]
        if isinstance(got, bool) or not isinstance(got, expected):
            raise ImportFailure(path, where, f"value.{name}", f"expected {said}, got {type(got).__name__}")
        return got

    qtype = question["type"]
    if kind == "pairwise" and is_pairwise(question):
        selected = part("selected", str, "a string")
        if selected not in PAIRWISE:
            raise ImportFailure(path, where, "value.selected", f"expected 'left' or 'right', got {selected[:40]!r}")
        return next(o["value"] for o in question["options"] if str(o["value"]) == selected)
    if kind == "choices" and (qtype in CHOICE_TYPES or qtype in ("boolean", "scale")):
        picked = part("choices", list, "a list")
        if any(not isinstance(c, str) for c in picked):
            raise ImportFailure(path, where, "value.choices", "expected a list of strings")
        if qtype == "boolean":
            mapped = [BOOLEAN_CHOICES.get(c.lower(), c) for c in picked]
        elif qtype == "scale":
            mapped = [int(c) if re.fullmatch(r"-?\d+", c) else c for c in picked]
        else:
            stored = {str(v): v for v in option_values(question, item_fields)}
            mapped = [stored.get(c, c) for c in picked]
        if qtype == "multi_choice":
            return mapped
        if len(mapped) != 1:
            raise ImportFailure(path, where, "value.choices", f"expected one choice, got {len(mapped)}")
        return mapped[0]
    if kind == "rating" and qtype == "scale":
        return _number(path, where, part("rating", (int, float), "a number"), "value.rating")
    if kind == "number" and qtype in ("scale", "index"):
        return _number(path, where, part("number", (int, float), "a number"), "value.number")
    if kind == "textarea" and qtype == "text":
        texts = part("text", list, "a list")
        if any(not isinstance(t, str) for t in texts):
            raise ImportFailure(path, where, "value.text", "expected a list of strings")
        return "\n".join(texts)
    raise ImportFailure(path, where, "type", f"a {kind!r} result cannot answer {question['key']!r}, a {qtype} "
                                             "question")


# ---- reading a file -----------------------------------------------------------------------------------------------

def _where(index, task):
    task_id = task.get("id") if isinstance(task, dict) else None
    return f"task {index}" + (f" (id {task_id})" if isinstance(task_id, (int, str)) and not isinstance(task_id, bool)
                              else "")


def _results(path, where, holder, name):
    """The results of an annotation or prediction, each a checked {from_name, type, value}."""
    results = holder.get("result", [])
    if not isinstance(results, list):
        raise ImportFailure(path, where, f"{name}.result", f"expected a list, got {type(results).__name__}")
    for r_index, result in enumerate(results):
        at = f"{name}.result[{r_index}]"
        if not isinstance(result, dict):
            raise ImportFailure(path, where, at, f"expected an object, got {type(result).__name__}")
        for key, kind in (("from_name", str), ("type", str), ("value", dict)):
            if not isinstance(result.get(key), kind):
                raise ImportFailure(path, where, f"{at}.{key}",
                                    f"expected {'an object' if kind is dict else 'a string'}, got "
                                    f"{type(result.get(key)).__name__}")
    return results


def annotator_of(path, where, annotation, name):
    """Who made an annotation, as text: Label Studio's user id (`completed_by`), or the email of an expanded
    `completed_by` object (as Label Studio exports it on request and reads it on import); refused when the file
    does not say."""
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        email = who.get("email")
        if isinstance(email, str) and "@" in email and len(email) <= 254 and not any(c.isspace() for c in email):
            return email
        who = who.get("id")
    if isinstance(who, bool) or not isinstance(who, int) or who < 0:
        raise ImportFailure(path, where, f"{name}.completed_by",
                            "an unknown annotator: expected Label Studio's user id (an integer) or {\"email\": ...}, "
                            f"got {str(who)[:40] if who is not None else 'nothing'}")
    return str(who)


def _item(path, where, index, task, data):
    """(ItemRecord, its form or None, its task's name) of a task: as our export wrote it under data.hb, else read
    from its data."""
    hb = data.get(HB)
    if hb is not None:
        if not isinstance(hb, dict):
            raise ImportFailure(path, where, f"data.{HB}", "expected an object")
        for key, kind in (("task", str), ("external_id", str), ("dialogue", list), ("fields", dict), ("meta", dict),
                          ("form", dict)):
            if not isinstance(hb.get(key), kind):
                said = {str: "a string", dict: "an object", list: "a list"}[kind]
                raise ImportFailure(path, where, f"data.{HB}.{key}",
                                    f"expected {said}, got {type(hb.get(key)).__name__}")
        if not SLUG.fullmatch(hb["task"]):
            raise ImportFailure(path, where, f"data.{HB}.task", "expected a task slug (letters, digits, hyphens or "
                                                                "underscores, at most 100)")
        if not 0 < len(hb["external_id"]) <= 200:
            raise ImportFailure(path, where, f"data.{HB}.external_id", "expected an id of 1 to 200 characters")
        if hb.get("source_gold") is not None and not isinstance(hb["source_gold"], dict):
            raise ImportFailure(path, where, f"data.{HB}.source_gold", "expected an object or null")
        try:
            validate_form(hb["form"])
        except ValidationError as error:
            raise ImportFailure(path, where, f"data.{HB}.form", "; ".join(error.messages)) from None
        turns = check_turns(path, where, hb["dialogue"], f"data.{HB}.dialogue")
        return ItemRecord(hb["task"], hb["external_id"], turns, hb["fields"], hb["meta"], hb.get("source_gold"),
                          where), hb["form"], str(hb.get("task_name") or hb["task"])
    task_id = task.get("id")
    if isinstance(task_id, bool) or not isinstance(task_id, (int, str)) or not 0 < len(str(task_id)) <= 200:
        raise ImportFailure(path, where, "id", "expected the task's id (an integer, or a string of 1 to 200 "
                                               "characters)")
    key = DIALOGUE if DIALOGUE in data else "text"
    given = data.get(key)
    if isinstance(given, list):
        turns = check_turns(path, where, given, f"data.{key}")
    elif isinstance(given, str) and given.strip():
        lines = [line for line in given.split("\n") if line.strip()]
        try:
            turns = parse_speaker_lines(path, where, lines, f"data.{key}")
        except ImportFailure:
            turns = [{"speaker": "text", "text": given.strip()}]
    else:
        raise ImportFailure(path, where, f"data.{key}", "expected the dialogue: a list of {speaker, text} or text")
    fields = {k: v for k, v in data.items() if k != key}
    meta = {"language": language_of_text(" ".join(t["text"] for t in turns)), "source_index": index,
            "labelstudio_id": task_id}
    return ItemRecord(TASK_SLUG, str(task_id), turns, fields, meta, None, where), None, "Label Studio project"


def inferred_form(path, tasks):
    """The form a file's results show, for tasks not written by our export: one optional question per control, in
    the order the file first uses them; the first choice, rating or pairwise control is primary."""
    seen = {}
    for index, task in enumerate(tasks):
        where = _where(index, task)
        for name in ("annotations", "predictions"):
            holders = task.get(name) if isinstance(task, dict) else None
            for a_index, holder in enumerate(holders if isinstance(holders, list) else []):
                if not isinstance(holder, dict):
                    continue
                for r_index, result in enumerate(_results(path, where, holder, f"{name}[{a_index}]")):
                    kind, value = result["type"], result["value"]
                    entry = seen.setdefault(result["from_name"], {"type": kind, "values": set(), "multi": False})
                    if entry["type"] != kind:
                        raise ImportFailure(path, where, f"{name}[{a_index}].result[{r_index}].type", f"control "
                                            f"{result['from_name']!r} gives {kind!r} results here and "
                                            f"{entry['type']!r} ones before")
                    if kind not in ("choices", "rating", "number", "pairwise", "textarea"):
                        raise ImportFailure(path, where, f"{name}[{a_index}].result[{r_index}].type",
                                            f"a {kind[:40]!r} result; expected choices, rating, number, textarea "
                                            "or pairwise")
                    # Values of the wrong type are left to answer_of, which names their field.
                    given = value.get({"choices": "choices", "rating": "rating", "number": "number"}.get(kind, ""))
                    if kind == "choices" and isinstance(given, list):
                        entry["values"].update(str(c) for c in given)
                        entry["multi"] |= len(given) > 1
                    elif isinstance(given, (int, float)) and not isinstance(given, bool):
                        entry["values"].add(given)
    if not seen:
        raise ImportFailure(path, None, "annotations", "no results in the file: nothing tells what was asked")
    questions = []
    for key, entry in seen.items():
        kind, values = entry["type"], entry["values"]
        question = {"key": key, "label": key, "required": False}
        if kind == "choices":
            question.update(type="multi_choice" if entry["multi"] else "single_choice",
                            options=[{"value": v, "label": v} for v in sorted(values)])
        elif kind == "rating":
            question.update(type="scale", scale={"min": 1, "max": max([5, *[int(v) for v in values]])})
        elif kind == "number":
            low, high = int(min(values, default=0)), int(max(values, default=1))
            question.update(type="scale", scale={"min": low, "max": max(high, low + 1)})
        elif kind == "pairwise":
            question.update(type="single_choice", options=[{"value": v, "label": v} for v in PAIRWISE])
        else:
            question.update(type="text")
        questions.append(question)
    primary = next((q["key"] for q in questions if q["type"] in ("single_choice", "scale")), questions[0]["key"])
    return {"primary": primary, "questions": questions}


def _answers(path, where, holder, name, form, record, *, whole=True):
    """{question key: answer} of one annotation or prediction, each result checked against the form (`whole`: and
    the answers as one submission, by the form's rules; a prediction's answers are checked as verdicts instead)."""
    answers = {}
    questions = {q["key"]: q for q in form["questions"]}
    for r_index, result in enumerate(_results(path, where, holder, name)):
        at = f"{name}.result[{r_index}]"
        question = questions.get(result["from_name"])
        if question is None:
            raise ImportFailure(path, where, f"{at}.from_name",
                                f"a result for the control {result['from_name'][:60]!r}, which the labeling config "
                                f"lacks; its controls are {sorted(questions)}")
        if question["key"] in answers:
            raise ImportFailure(path, where, f"{at}.from_name", f"a second result for {question['key']!r}")
        try:
            answers[question["key"]] = answer_of(path, where, question, result, record.fields)
        except ImportFailure as failure:
            raise ImportFailure(path, where, f"{at}.{failure.field}", failure.expected) from None
    if not whole:
        return answers
    try:
        validate_answers(form, answers, record.fields, len(record.dialogue))
    except ValidationError as error:
        problems = error.message_dict if hasattr(error, "error_dict") else {"": error.messages}
        key, messages = next(iter(problems.items()))
        raise ImportFailure(path, where, f"{name}.result" + (f" ({key})" if key else ""), "; ".join(messages)) from None
    return answers


def records(path):
    """(task specs, [Task]) of the file, every task, label and prediction checked; nothing is written here."""
    tasks = json_array(path, "Label Studio tasks")
    forms, names, about, inferred, rows, seen = {}, {}, {}, None, [], {}
    for index, task in enumerate(tasks):
        where = _where(index, task)
        if not isinstance(task, dict):
            raise ImportFailure(path, where, None, f"expected a task object, got {type(task).__name__}")
        data = task.get("data")
        if not isinstance(data, dict):
            raise ImportFailure(path, where, "data", f"expected an object, got {type(data).__name__}")
        for name in ("annotations", "predictions"):
            if not isinstance(task.get(name, []), list):
                raise ImportFailure(path, where, name, f"expected a list, got {type(task[name]).__name__}")
        record, form, task_name = _item(path, where, index, task, data)
        names.setdefault(record.task, task_name)
        about.setdefault(record.task, (str((data.get(HB) or {}).get("dimension") or ""),
                                       str((data.get(HB) or {}).get("instructions") or "")))
        if form is None:
            inferred = inferred or inferred_form(path, tasks)
            form = inferred
        known = forms.setdefault(record.task, form)
        if known != form:
            raise ImportFailure(path, where, f"data.{HB}.form", f"task {record.task!r} has another form in an earlier "
                                                                "task of the file")
        key = (record.task, record.external_id)
        if key in seen:
            raise ImportFailure(path, where, "id", f"item {record.external_id!r} of {record.task!r} again (first at "
                                                   f"{seen[key]})")
        seen[key] = where
        row = Task(record)
        people = {}
        for a_index, annotation in enumerate(task.get("annotations") or []):
            name = f"annotations[{a_index}]"
            if not isinstance(annotation, dict):
                raise ImportFailure(path, where, name, f"expected an object, got {type(annotation).__name__}")
            who = annotator_of(path, where, annotation, name)
            if who in people:
                raise ImportFailure(path, where, f"{name}.completed_by", f"a second annotation by annotator {who} (the "
                                                                         f"first is {people[who]})")
            people[who] = name
            if annotation.get("was_cancelled") is True:
                row.cancelled += 1
                continue
            answers = _answers(path, where, annotation, name, form, record)
            if answers:
                row.labels.append(Label(who, answers, where))
        versions = set()
        for p_index, prediction in enumerate(task.get("predictions") or []):
            name = f"predictions[{p_index}]"
            if not isinstance(prediction, dict):
                raise ImportFailure(path, where, name, f"expected an object, got {type(prediction).__name__}")
            version = prediction.get("model_version", "")
            if not isinstance(version, str) or not version.strip():
                raise ImportFailure(path, where, f"{name}.model_version", "expected the model's name")
            if version in versions:
                raise ImportFailure(path, where, f"{name}.model_version", f"a second prediction of {version!r}")
            versions.add(version)
            answers = _answers(path, where, prediction, name, form, record, whole=False)
            if answers:
                row.predictions.append((version, answers, where))
        rows.append(row)
    specs = [TaskSpec(slug, names[slug], form, *about[slug]) for slug, form in forms.items()]
    return specs, rows


def parse(path):
    specs, rows = records(path)
    language = next((r.record.meta.get("language") for r in rows if r.record.meta.get("language")), "en")
    header = {"name": "", "language": language, "source": f"Label Studio export {path.name}", "licence": ""}
    return ParsedBenchmark(path, header, specs, [row.record for row in rows])
