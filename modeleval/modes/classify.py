"""Classifiers trained here (mode `classify`, DiQAD's supervised baseline): the likeliest class of each
dialogue, the expected value over the classes and their probabilities. Only a model a training run
registered scores in this mode, on the question it was trained on (settings.quality)."""
from __future__ import annotations

from benchmarks.formschema import rating_scale

from ..models import Mode, ParseStatus
from ..scorers import classifier
from .base import label_text
from .plan import Answer, FamilyPlan, Report, Section

MODES = (Mode.CLASSIFY,)
ORDERS_OPTIONS = False
PLAN = {Mode.CLASSIFY: FamilyPlan(Report(Section.RATINGS, Answer.CLASS, stands_in=True), trained_model=True)}
API_NEEDS = {}  # a classifier is always a local checkpoint
TEMPLATES = {
    (Mode.CLASSIFY, "en", ""): ("diqad-classifier-input/1",
                                "question:{user turn}response:{expert turn}... spliced, truncated from the left"),
}
# quality: the question the classifier was trained on (its labels are the model's own).
DEFAULTS = {Mode.CLASSIFY: {"quality": ""}}
# DiQAD's classifier input (scorers.classifier.render_dialogue), named on training and classify runs.
INPUT_VERSION, INPUT = TEMPLATES[(Mode.CLASSIFY, "en", "")]


def api_need(mode, settings) -> None:
    return None


def unsuited(task, mode, spec, settings=None) -> str | None:
    if (settings or {}).get("quality") or rating_scale(spec) is not None:
        return None
    return (f"task {task}: classify mode needs a scale or numeric choice as primary question, "
            f"{spec['key']!r} is {spec['type']}")


def defaults(mode, language, preset) -> dict:
    return dict(DEFAULTS[mode])


def validate(mode, resolved) -> None:
    """The trained model decides the classes: nothing to check beyond the defaults' keys."""


def default_template(mode, settings) -> tuple[str, str]:
    return INPUT_VERSION, INPUT


def check_run_template(mode, template, settings) -> None:
    """The input is the classifier's own rendering of the dialogue: no template to fill."""


def check_run(mode, settings, tasks, item_ids) -> None:
    """The model's training run chose the question and its items."""


def requests(run, items):
    key = run.settings["quality"]
    return [(item, classifier.render_dialogue(item.dialogue), (item.source_gold or {}).get(key)) for item in items]


def score(run, model, requests):
    labels, probs = model.class_probs([text for _, text, _ in requests])
    rows = []
    for (item, text, gold), row in zip(requests, probs, strict=True):
        answer = labels[max(range(len(row)), key=row.__getitem__)]
        gold = "" if gold is None else label_text(gold)
        rows.append({"item": item, "variant": "", "gold": gold, "prompt": text, "answer": answer,
                     "correct": (answer == gold) if gold else None, "parse_status": ParseStatus.SCORED,
                     "rating": sum(float(label) * p for label, p in zip(labels, row, strict=True)),
                     "probabilities": {"raw": dict(zip(labels, row, strict=True))}})
    return rows
