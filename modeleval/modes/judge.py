"""A judge asked a data set's own prompt (mode `judge`, JUDGE-BENCH): the item's judge prompt for the question,
filled with the item's instance and followed by the study's additional prompt naming the labels, sent as one user
message; the reply read as one of the question's labels (a single choice) or as a rating (a scale) by the study's
rule, and an unreadable reply replaced as the study replaces it (`studies.judgebench`).

The prompt is the data's: an item imported from JUDGE-BENCH's unified format keeps its `instance` and its
`judge_prompts` per question in its meta (`benchmarks.importers.judgebench`); the run's template is the additional
prompt, "{}" standing for the labels.
"""
from __future__ import annotations

from benchmarks.formschema import question
from benchmarks.models import Item
from core.errors import Code
from studies import judgebench

from ..errors import RunError
from ..models import Mode, ParseStatus
from .base import check_choice
from .plan import Answer, FamilyPlan, Report, Section

MODES = (Mode.JUDGE,)
ORDERS_OPTIONS = False
PLAN = {Mode.JUDGE: FamilyPlan(Report(Section.JUDGE, Answer.LABEL))}
API_NEEDS = {Mode.JUDGE: "chat"}
# The study's additional prompt is the one template (no language or variant of its own).
TEMPLATES = {(Mode.JUDGE, "en", ""): (judgebench.TEMPLATE_VERSION, judgebench.ADDITIONAL_PROMPT)}
# quality: the question judged (empty: the primary one); backend: where the model runs, set from the model.
DEFAULTS = {Mode.JUDGE: {"preset": judgebench.PRESET, "quality": "", "max_new_tokens": judgebench.MAX_NEW_TOKENS,
                         "system": "", "backend": ""}}
PRESETS = (judgebench.PRESET,)
META_PROMPTS, META_INSTANCE = "judge_prompts", "instance"


def api_need(mode, settings) -> str:
    return API_NEEDS[mode]


def metric_of(spec) -> judgebench.Metric | None:
    """The study's metric for a question: a single choice over listed labels is categorical, a scale graded."""
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        return judgebench.Metric(judgebench.CATEGORICAL, tuple(o["value"] for o in spec["options"]))
    if spec["type"] == "scale":
        return judgebench.Metric(judgebench.GRADED, (spec["scale"]["min"], spec["scale"]["max"]))
    return None


def unsuited(task, mode, spec, settings=None) -> str | None:
    key = (settings or {}).get("quality") or spec["key"]
    try:
        spec = question(task.form, key)
    except StopIteration:
        return f"task {task} has no question {key!r}"
    if metric_of(spec) is None:
        return (f"task {task}: judge mode reads a label of a single choice over listed labels, or a rating of a "
                f"scale; {spec['key']!r} is {spec['type']}")
    if not Item.objects.filter(task=task, **{f"meta__{META_PROMPTS}__has_key": spec["key"]}).exists():
        return (f"task {task}: judge mode asks each item its data set's own judge prompt, and no item carries one "
                f"for {spec['key']!r} (import JUDGE-BENCH's unified format)")
    return None


def defaults(mode, language, preset) -> dict:
    return dict(DEFAULTS[mode])


def validate(mode, resolved) -> None:
    check_choice(resolved, "preset", PRESETS)


def for_model(mode, resolved, model) -> dict:
    """The settings once the model is known: where it runs (the study asked local checkpoints and APIs apart)."""
    return {**resolved, "backend": "api" if model.is_api else "local"}


def default_template(mode, settings) -> tuple[str, str]:
    return TEMPLATES[(mode, "en", "")]


def check_run_template(mode, template, settings) -> None:
    if "{}" not in template:
        raise ValueError("the judge's additional prompt names the labels where it holds {}")


def check_run(mode, settings, tasks, item_ids) -> None:
    """Every item judged carries its data set's prompt for the question and its instance."""
    for task in tasks:
        key = settings["quality"] or task.primary_key
        items = Item.objects.filter(task=task)
        if item_ids is not None:
            items = items.filter(pk__in=item_ids)
        # An item whose meta has no prompts at all is matched by isnull (has_key on a missing object is NULL).
        lacking = (items.filter(**{f"meta__{META_PROMPTS}__isnull": True})
                   | items.exclude(**{f"meta__{META_PROMPTS}__has_key": key}))
        lacking = list(lacking.order_by("pk").values_list("external_id", flat=True)[:3])
        if lacking:
            raise RunError(Code.BAD_SETTINGS, f"task {task}: items {list(lacking)} carry no judge prompt for {key!r} "
                                              "(import them from JUDGE-BENCH's unified format)")


# --- requests ------------------------------------------------------------------------------


def requests(run, items):
    """(item, the prompt, the metric, the people's aggregate as the study compares with it)."""
    built = []
    for item in items:
        key = run.settings["quality"] or item.task.primary_key
        metric = metric_of(question(item.task.form, key))
        meta = item.meta or {}
        prompt = judgebench.judge_prompt(meta[META_PROMPTS][key], meta[META_INSTANCE], metric, run.prompt_template)
        gold = (item.source_gold or {}).get(key)
        built.append((item, prompt, metric, "" if gold is None else str(gold)))
    return built


def study_render(tokenizer, user):
    """models.py HFModel.process: the user message in the tokenizer's chat template without a generation prompt,
    the text then tokenized by the pipeline with its special tokens."""
    return tokenizer.apply_chat_template(judgebench.chat_messages(user), tokenize=False), True


# --- scoring (on the worker) ----------------------------------------------------------------


def score(run, model, requests):
    asked = {} if run.model.is_api else {"render": study_render}
    shown, replies = model.replies([prompt for _, prompt, _, _ in requests], **asked)
    rows = []
    for item, prompt, metric, gold in requests:
        text = shown[prompt]
        reply = replies[text]
        answer, valid = judgebench.extract_answer(reply, metric)
        if not valid:
            answer = judgebench.stand_in(metric, judgebench.stand_in_rng(run.seed, item.external_id))
        graded = metric.category != judgebench.CATEGORICAL
        rows.append({"item": item, "variant": "", "gold": gold, "prompt": text, "raw_output": reply,
                     "answer": str(int(answer) if graded and float(answer).is_integer() else answer),
                     "rating": float(answer) if graded else None,
                     # An unreadable reply is wrong, though the study's stand-in may happen to be the gold.
                     "correct": valid and str(answer) == gold if gold and not graded else None,
                     "parse_status": ParseStatus.PARSED if valid else ParseStatus.UNPARSABLE,
                     "probabilities": {"valid": valid, "stand_in": None if valid else answer}})
    return rows
