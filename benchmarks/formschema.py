"""The answer form of a task: a list of questions, one of them primary.

Shape (stored in Task.form):
{
  "primary": "answer",
  "questions": [
    {"key": "answer", "type": "single_choice", "label": "Which option?",
     "options": "item"},                                  # options come from item.fields["options"]
    {"key": "score", "type": "single_choice", "options": [
        {"value": 2, "label": "meets all dimensions"},
        {"value": -1, "label": "private data in the response", "excludes": true}]},
    {"key": "reasons_0", "type": "multi_choice", "options": [...],
     "shown_if": {"key": "score", "in": [0]}, "required": true},
    {"key": "overall", "type": "scale", "scale": {"min": 0, "max": 4}},
    {"key": "needs_check", "type": "boolean"},
    {"key": "first_ai_turn", "type": "index"},            # 0-based turn index into the dialogue
    {"key": "reason", "type": "text", "required": false}
  ]
}
A question or an option may add "labels": {"zh-hans": "...", "ko": "..."}: its label in those languages
(`localized` below picks the person's, else `label` stays).
`required` defaults to true. A question with `shown_if` is asked (and required) only when the
condition holds, and must be absent otherwise. An option with `"excludes": true` takes the item
out of the data set while its record is kept.
"""
from django.core.exceptions import ValidationError

QUESTION_TYPES = {"single_choice", "multi_choice", "scale", "boolean", "index", "text"}
CHOICE_TYPES = {"single_choice", "multi_choice"}
MAX_TEXT_ANSWER = 10_000


def _fail(path, message):
    raise ValidationError(f"form{path}: {message}")


def validate_form(form):
    """Raise ValidationError naming the offending path when the form is not well formed."""
    if not isinstance(form, dict):
        _fail("", "expected an object with 'questions' and 'primary'")
    questions = form.get("questions")
    if not isinstance(questions, list) or not questions:
        _fail(".questions", "expected a non-empty list of questions")
    keys = []
    for index, question in enumerate(questions):
        path = f".questions[{index}]"
        if not isinstance(question, dict):
            _fail(path, "expected an object")
        key = question.get("key")
        if not isinstance(key, str) or not key:
            _fail(f"{path}.key", "expected a non-empty string")
        if key in keys:
            _fail(f"{path}.key", f"duplicate question key {key!r}")
        keys.append(key)
        qtype = question.get("type")
        if qtype not in QUESTION_TYPES:
            _fail(f"{path}.type", f"expected one of {sorted(QUESTION_TYPES)}, got {qtype!r}")
        if qtype in CHOICE_TYPES:
            options = question.get("options")
            if options != "item":
                if not isinstance(options, list) or not options:
                    _fail(f"{path}.options", "expected 'item' or a non-empty list of {value, label}")
                values = []
                for o_index, option in enumerate(options):
                    if not isinstance(option, dict) or "value" not in option:
                        _fail(f"{path}.options[{o_index}]", "expected an object with 'value'")
                    if option["value"] in values:
                        _fail(f"{path}.options[{o_index}].value", f"duplicate option {option['value']!r}")
                    values.append(option["value"])
        if qtype == "scale":
            scale = question.get("scale")
            if not isinstance(scale, dict) or not all(isinstance(scale.get(b), int) for b in ("min", "max")):
                _fail(f"{path}.scale", "expected {min: int, max: int}")
            if scale["min"] >= scale["max"]:
                _fail(f"{path}.scale", "min must be below max")
        condition = question.get("shown_if")
        if condition is not None and (not isinstance(condition, dict) or condition.get("key") not in keys[:-1]
                                      or not isinstance(condition.get("in"), list)):
            _fail(f"{path}.shown_if", "expected {key: an earlier question's key, in: [values]}")
    primary = form.get("primary")
    if primary not in keys:
        _fail(".primary", f"expected the key of one of the questions {keys}, got {primary!r}")
    if next(q for q in questions if q["key"] == primary).get("shown_if"):
        _fail(".primary", "the primary question cannot be conditional")
    return form


def same_value(a, b):
    """Equal and of the same type: JSON true is not the score 1, nor 2.0 the option 2 (True == 1 in Python)."""
    return type(a) is type(b) and a == b


def is_one_of(value, allowed):
    """`value in allowed`, compared with types (same_value)."""
    return any(same_value(value, a) for a in allowed)


def question(form, key):
    return next(q for q in form["questions"] if q["key"] == key)


def option_values(question_spec, item_fields=None):
    options = question_spec.get("options")
    if options == "item":
        return list((item_fields or {}).get("options", {}).keys())
    return [option["value"] for option in options]


BOOLEAN_VALUES = [False, True]  # a yes/no question's answers, low to high


def scale_values(question_spec):
    """A scale question's integers, low to high."""
    return list(range(question_spec["scale"]["min"], question_spec["scale"]["max"] + 1))


def question_values(question_spec, item_fields=None):
    """The values a question can take for one item, in the form's order (a scale's and yes/no's low to high),
    excluding options included; None for free answers (text, index)."""
    if question_spec["type"] in CHOICE_TYPES:
        return option_values(question_spec, item_fields)
    if question_spec["type"] == "scale":
        return scale_values(question_spec)
    if question_spec["type"] == "boolean":
        return list(BOOLEAN_VALUES)
    return None


def primary_values(form, item_fields=None):
    """The values the primary question can take for one item (None for free answers)."""
    return question_values(question(form, form["primary"]), item_fields)


def excluding_values(question_spec):
    options = question_spec.get("options")
    if not isinstance(options, list):
        return set()
    return {option["value"] for option in options if option.get("excludes")}


def is_shown(question_spec, answers):
    condition = question_spec.get("shown_if")
    return condition is None or is_one_of(answers.get(condition["key"]), condition["in"])


def validate_answers(form, answers, item_fields=None, dialogue_length=None):
    """Check one submission against the form; return the set of question keys that exclude the item.

    Raises ValidationError with a dict {question key: message} so a client can show each error
    next to its question.
    """
    if not isinstance(answers, dict):
        raise ValidationError({"answers": "expected an object keyed by question"})
    errors = {}
    known = {q["key"] for q in form["questions"]}
    for key in answers:
        if key not in known:
            errors[key] = f"unknown question; expected one of {sorted(known)}"
    excluded_by = set()
    for spec in form["questions"]:
        key, qtype = spec["key"], spec["type"]
        shown = is_shown(spec, answers)
        present = key in answers and answers[key] not in (None, "", [])
        if not shown:
            if present:
                errors[key] = f"not asked when {spec['shown_if']['key']} is {answers.get(spec['shown_if']['key'])!r}"
            continue
        if not present:
            if spec.get("required", True):
                errors[key] = "required"
            continue
        value = answers[key]
        if qtype == "single_choice":
            allowed = option_values(spec, item_fields)
            if not is_one_of(value, allowed):
                errors[key] = f"expected one of {allowed}, got {value!r}"
            elif is_one_of(value, excluding_values(spec)):
                excluded_by.add(key)
        elif qtype == "multi_choice":
            allowed = option_values(spec, item_fields)
            if (not isinstance(value, list) or any(not is_one_of(v, allowed) for v in value)
                    or len(set(map(repr, value))) != len(value)):
                errors[key] = f"expected a list of distinct values from {allowed}"
        elif qtype == "scale":
            low, high = spec["scale"]["min"], spec["scale"]["max"]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                errors[key] = f"expected an integer from {low} to {high}, got {value!r}"
        elif qtype == "boolean":
            if not isinstance(value, bool):
                errors[key] = f"expected true or false, got {value!r}"
        elif qtype == "index":
            upper = dialogue_length - 1 if dialogue_length else None
            if (isinstance(value, bool) or not isinstance(value, int) or value < 0
                    or (upper is not None and value > upper)):
                errors[key] = f"expected a turn index from 0 to {upper}, got {value!r}"
        elif qtype == "text" and (not isinstance(value, str) or len(value) > MAX_TEXT_ANSWER):
            errors[key] = f"expected text of at most {MAX_TEXT_ANSWER} characters"
    if errors:
        raise ValidationError(errors)
    return excluded_by


def rating_values(question_spec):
    """The values a question's answers are ratings on, in the form's order, or None when it is not a rating: a
    scale's integers, yes/no as [False, True], or the numeric options of a single choice with its exclusion
    codes left out (DiQAD's quality: 0, 1, 2)."""
    if question_spec["type"] in ("scale", "boolean"):
        return question_values(question_spec)
    options = question_spec.get("options")
    if question_spec["type"] == "single_choice" and isinstance(options, list):
        values = [o["value"] for o in options if not o.get("excludes")]
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return values
    return None


def rating_scale(question_spec):
    """The values a model rates a question on, low to high: rating_values' integers (a scale, or a single
    choice's integer options); None for yes/no, non-integer options and questions that are no rating."""
    values = rating_values(question_spec)
    if values is None or question_spec["type"] == "boolean" or not all(isinstance(v, int) for v in values):
        return None
    return sorted(values)


def language_choice(texts, language):
    """Which key of `texts` ({language code: text}) serves a person working in `language`: the language itself, else
    the base language of a regional code ("zh" for "zh-hans"); None when neither holds a text that is not blank."""
    if not language or not isinstance(texts, dict):
        return None
    return next((code for code in (language, language.split("-")[0])
                 if isinstance(texts.get(code), str) and texts[code].strip()), None)


def localized(form, language):
    """The form as a person working in `language` reads it: a question's or an option's `labels`
    ({"zh-hans": ..., "ko": ...}, optional) gives its label in that language (the base language of a regional code,
    e.g. "zh" for "zh-hans", also counts); without one its `label` stays."""
    if not language or not isinstance(form, dict):
        return form

    def label_of(spec):
        labels = spec.get("labels") if isinstance(spec, dict) else None
        code = language_choice(labels, language)
        return labels[code] if code else None

    questions = []
    for question in form.get("questions", []):
        question = dict(question)
        question["label"] = label_of(question) or question.get("label")
        if isinstance(question.get("options"), list):
            question["options"] = [{**o, "label": label_of(o) or o.get("label")} if isinstance(o, dict) else o
                                   for o in question["options"]]
        questions.append(question)
    return {**form, "questions": questions}


def without_names(form):
    """The answer form without its names in other languages (`labels`): what an answer means, which a change of
    names leaves alone (an import into a task whose form differs only by them is the same task)."""
    if not isinstance(form, dict):
        return form

    def bare(spec):
        return {k: v for k, v in spec.items() if k != "labels"} if isinstance(spec, dict) else spec

    questions = [{**bare(q), **({"options": [bare(o) for o in q["options"]]} if isinstance(q.get("options"), list)
                                else {})} if isinstance(q, dict) else q for q in form.get("questions", [])]
    return {**form, "questions": questions}
