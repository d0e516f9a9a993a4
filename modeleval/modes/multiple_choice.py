"""Multiple choice (modes `loglikelihood` and `generate`): the item's options scored by their
log-likelihood after the prompt, or a reply generated and its option letter read.

Templates are the scorers' (`modeleval.scorers.prompts`) with one addition: `{extras}`, the item's
task-specific fields (premise, hypothesis, knowledge...) between the dialogue and the question,
without which NLI or knowledge-grounded items cannot be answered at all.

By log-likelihood, by default (continuation "text"): the prompt shows the dialogue and the question
and ends with "Answer:"; each option's text, after a space, is the continuation scored (DialogBench's
per-option perplexity of the option text; lm-eval's acc / acc_norm come from the same numbers).
Continuation "letter" lists the options "A. ..." in the prompt and scores " A", " B"... instead.

A preset (settings {"preset": "dialogbench"}) replaces all that with a study's own evaluation (its recipe,
`studies.recipe`): the run's template is then the study's prompts per task as JSON (`studies.dialogbench`).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import studies
from benchmarks.formschema import CHOICE_TYPES
from studies.vocabulary import Rule

from ..models import Mode, ParseStatus
from ..prompting import check_template as check_fields
from ..scorers import prompts
from ..scorers.letters import extract_option_letter
from ..scorers.positions import circular_permutations, permute_options
from .base import check_choice, lookup_template, turn_text
from .plan import Answer, FamilyPlan, Report, Section

MODES = (Mode.LOGLIKELIHOOD, Mode.GENERATE)
ORDERS_OPTIONS = True  # position policies (the gold answer moved to each position) apply
API_NEEDS = {Mode.GENERATE: "chat", Mode.LOGLIKELIHOOD: "prompt_logprobs"}

DEFAULT_INSTRUCTION = {
    "en": "Read the dialogue and answer the question.",
    "zh": "阅读对话并回答问题。",
}
DEFAULT_QUESTION = {"en": "Which option is correct?", "zh": "哪个选项是正确的？"}
# DialogBench task extras, shown in this order when an item has them.
EXTRA_FIELDS = ("knowledge", "commonsense", "persona", "premise", "hypothesis", "response", "slot", "test_question")


def _with_extras(template: str, marker: str) -> str:
    if marker not in template:
        raise ValueError(f"cannot place {{extras}} in the template: {marker!r} not found")
    return template.replace(marker, "{extras}" + marker, 1)


MC_TEXT_EN = _with_extras(prompts.MC_LOGLIK_EN, "\n\nQuestion:")
MC_TEXT_ZH = _with_extras(prompts.MC_LOGLIK_ZH, "\n\n问题：")
MC_LETTER_EN = MC_TEXT_EN.replace("Answer:", "{options}\nAnswer:")
MC_LETTER_ZH = MC_TEXT_ZH.replace("答案：", "{options}\n答案：")
# (mode, language, variant) -> (version, template). A version names a template text: change the
# text, change the version.
TEMPLATES = {
    (Mode.LOGLIKELIHOOD, "en", "text"): ("mc-loglikelihood-text-en/1", MC_TEXT_EN),
    (Mode.LOGLIKELIHOOD, "zh", "text"): ("mc-loglikelihood-text-zh/1", MC_TEXT_ZH),
    (Mode.LOGLIKELIHOOD, "en", "letter"): ("mc-loglikelihood-letter-en/1", MC_LETTER_EN),
    (Mode.LOGLIKELIHOOD, "zh", "letter"): ("mc-loglikelihood-letter-zh/1", MC_LETTER_ZH),
    (Mode.GENERATE, "en", ""): ("mc-generate-en/1", _with_extras(prompts.MC_GENERATE_EN, "\n\nQuestion:")),
    (Mode.GENERATE, "zh", ""): ("mc-generate-zh/1", _with_extras(prompts.MC_GENERATE_ZH, "\n\n问题：")),
}
TEMPLATE_FIELDS = {"instruction", "dialogue", "extras", "question", "options"}

DEFAULTS = {
    # rule: which pick is the run's `answer` (DialogBench: lowest mean token NLL = "per_token").
    Mode.LOGLIKELIHOOD: {"continuation": "text", "rule": Rule.PER_TOKEN},
    Mode.GENERATE: {"max_new_tokens": 16, "system": ""},
}
RULES = tuple(Rule)
PLAN = {Mode.LOGLIKELIHOOD: FamilyPlan(Report(Section.MULTIPLE_CHOICE, Answer.OPTION, by_rule=True, stands_in=True)),
        Mode.GENERATE: FamilyPlan(Report(Section.MULTIPLE_CHOICE, Answer.OPTION, stands_in=True))}


def api_need(mode, settings) -> str:
    return API_NEEDS[mode]


def unsuited(task, mode, spec, settings=None) -> str | None:
    if spec["type"] in CHOICE_TYPES and spec.get("options") == "item":
        return None
    return (f"task {task}: mode {mode} needs a choice question whose options come from "
            f"the items; the primary question {spec['key']!r} is {spec['type']}")


def defaults(mode, language, preset) -> dict:
    if language not in DEFAULT_INSTRUCTION and preset is None:
        # Never an English template for items in another language.
        raise ValueError(f"no {mode} template in language {language!r}; pick a study preset written in it "
                         f"({', '.join(sorted(studies.offering(MODES)))})")
    if preset is None:
        return {**DEFAULTS[mode], "instruction": DEFAULT_INSTRUCTION[language]}
    recipe = studies.recipe({"preset": preset}, mode)
    if recipe is None:
        offered = sorted(studies.offering((mode,)))
        raise ValueError(f"unknown preset {preset!r} for mode {mode}; expected one of {offered}")
    # The preset's prompts carry their own instruction.
    return {**DEFAULTS[mode], **recipe.settings, "preset": preset}


def validate(mode, resolved) -> None:
    if mode != Mode.LOGLIKELIHOOD:
        validate_generate(resolved)
        return
    preset = resolved.get("preset")
    if resolved["continuation"] not in ("text", "letter"):
        raise ValueError('continuation must be "text" or "letter"')
    check_choice(resolved, "rule", RULES)
    if preset and resolved["continuation"] != "text":
        raise ValueError(f"the {preset} preset scores the option text (continuation \"text\")")
    if recipe := studies.recipe(resolved, mode):
        recipe.validate(resolved)


def validate_generate(resolved) -> None:
    if recipe := studies.recipe(resolved, Mode.GENERATE):
        recipe.validate(resolved)


def for_model(mode, resolved, model) -> dict:
    """The settings once the run's model is known: a study may read how to ask it from its names (DialogBench's
    evaluator, as its src/evaluate.py picks one; a model behind an API asked as its GPT rows were), and refuse
    where the model cannot be asked that way."""
    recipe = studies.recipe(resolved, mode)
    if recipe is None:
        return resolved
    return recipe.for_model(resolved, (model.name, model.source, model.api_model), model.is_api)


def default_position_policy(mode, resolved) -> str:
    """The options' order a run of these settings is scored in unless asked: as given, or as its study asks
    (DialogBench's Qwen and Baichuan evaluators: every item with the answer at each position, pooled)."""
    recipe = studies.recipe(resolved, mode)
    return recipe.position_policy(resolved) if recipe else "as_is"


def default_template(mode, settings) -> tuple[str, str]:
    language = settings.get("language", "en")
    if recipe := studies.recipe(settings, mode):
        return recipe.default_template(settings)
    variant = settings.get("continuation", "") if mode == Mode.LOGLIKELIHOOD else ""
    return lookup_template(TEMPLATES, mode, language, variant)


def preset_prompts(template: str) -> dict:
    """A preset run's template: a JSON object of task name -> prompt."""
    try:
        prompts_by_task = json.loads(template)
    except ValueError:
        prompts_by_task = None
    if not isinstance(prompts_by_task, dict) or not all(isinstance(v, str) for v in prompts_by_task.values()):
        raise ValueError("a preset run's template is a JSON object of task name -> prompt")
    return prompts_by_task


def check_run_template(mode, template, settings) -> None:
    if studies.recipe(settings, mode) is not None:
        preset_prompts(template)  # a JSON object of task -> the study's own prompt
    else:
        check_fields(template, TEMPLATE_FIELDS)


def check_run(mode, settings, tasks, item_ids) -> None:
    """Nothing to read in the database: a multiple-choice run needs only its items' options."""


# --- items -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    name: str  # "" for the options as given, else the position the gold answer was moved to
    options: dict[str, str]  # shown letter -> option text, in the order shown
    source_keys: dict[str, str]  # shown letter -> the item's own letter for that option
    gold: str  # shown letter of the gold answer, "" without gold


def item_options(item) -> dict[str, str]:
    options = (item.fields or {}).get("options")
    if not isinstance(options, dict) or len(options) < 2 or not all(isinstance(v, str) for v in options.values()):
        raise ValueError(f"item {item.external_id}: fields.options must map at least 2 letters to option texts")
    return dict(options)


def item_gold(item, primary: str) -> str:
    gold = (item.source_gold or {}).get(primary)
    return "" if gold is None else str(gold)


def variants(item, primary: str, policy: str) -> list[Variant]:
    """The option orders to score an item in: as given, or with the gold answer at each position
    (swapped there, or by rotation)."""
    options, gold = item_options(item), item_gold(item, primary)
    identity = {k: k for k in options}
    if policy == "as_is":
        return [Variant("", options, identity, gold if gold in options else "")]
    if gold not in options:
        raise ValueError(f"item {item.external_id}: position policy {policy} needs a gold answer among the options")
    # Permute the keys, then read the texts through them: the mapping back to the item's own
    # letters comes for free.
    if policy == "gold_at_each_position":
        orders = [permute_options(identity, gold, target) for target in options]
    elif policy == "circular":
        orders = circular_permutations(identity, gold)
    else:
        raise ValueError(f"unknown position policy {policy!r}")
    return [Variant(str(new_gold), {k: options[src] for k, src in order.items()}, dict(order), str(new_gold))
            for order, new_gold in orders]


def render_extras(fields: Mapping, language: str) -> str:
    labels = [(key, key.replace("_", " ").capitalize()) for key in EXTRA_FIELDS if fields.get(key) not in (None, "")]
    sep = "：" if language == "zh" else ": "
    return "".join(f"\n\n{label}{sep}{turn_text(fields[key])}" for key, label in labels)


def _prompt_recipe(settings: Mapping, mode: str):
    """The study's recipe that lays out the prompt: its own for `mode`; without a mode (one prompt rendered
    outside a run), the study's for generation, else for log-likelihood."""
    study = studies.study_of(settings)
    for each in ((mode,) if mode else (Mode.GENERATE, Mode.LOGLIKELIHOOD)):
        if study is not None and each in study.recipes:
            return study.recipes[each]
    return None


def render_mc(template: str, item, variant: Variant, settings: Mapping, mode: str = "") -> str:
    fields = item.fields or {}
    language = settings.get("language", "en")
    if recipe := _prompt_recipe(settings, mode):
        return recipe.prompt(template, item, variant.options, settings)
    return template.format(
        instruction=settings.get("instruction", ""),
        dialogue=prompts.render_dialogue(item.dialogue),
        extras=render_extras(fields, language),
        question=fields.get("question") or DEFAULT_QUESTION[language],
        options=prompts.render_options(variant.options),
    )


# --- scoring (on the worker) ----------------------------------------------------------------


def requests(run, items):
    return [(item, variant, render_mc(run.prompt_template, item, variant, run.settings, run.mode))
            for item in items for variant in variants(item, item.task.primary_key, run.position_policy)]


def _row(item, variant, answer, **fields):
    correct = (answer == variant.gold) if variant.gold else None
    return {"item": item, "variant": variant.name, "gold": variant.gold, "answer": answer or "", "correct": correct,
            **fields}


def score(run, model, requests):
    return _score_loglikelihood(run, model, requests) if run.mode == Mode.LOGLIKELIHOOD \
        else _score_generate(run, model, requests)


def loglikelihood_request(settings, item, variant, context):
    """What a log-likelihood run asks the model for one item: (context, continuations in the order shown,
    delimiter put before each, whether the tokenizer's special tokens are added), and the cap on the model's
    input length (None: the model's own). The one home of the request: the scorer asks it, and the
    lm-evaluation-harness export writes it (modeleval.lmeval)."""
    if recipe := studies.recipe(settings, Mode.LOGLIKELIHOOD):
        # The study's continuations (DialogBench: the option text right after prompt_pretrain, with the
        # tokenizer's special tokens; KoDialogBench: the class, the candidate utterance or the option's number).
        return (context, *recipe.continuations(item, variant.options, settings)), recipe.cap
    by_text = settings["continuation"] == "text"
    return (context, tuple(variant.options.values()) if by_text else tuple(variant.options), " ", False), None


def _score_loglikelihood(run, model, requests):
    s = run.settings
    asked, caps = [], set()
    for item, variant, context in requests:
        request, cap = loglikelihood_request(s, item, variant, context)
        asked.append(request)
        caps.add(cap)
    cap = caps.pop() if len(caps) == 1 else None
    results = model.option_scores(asked, cap=cap)
    rows = []
    for (item, variant, _), result in zip(requests, results, strict=True):
        keys = list(variant.options)
        options = [
            {"key": key, "source_key": variant.source_keys[key], "text": variant.options[key],
             "context": o.context, "continuation": o.continuation, "logprob": o.logprob,
             "n_tokens": o.n_tokens, "n_chars": o.n_chars, "is_greedy": o.is_greedy}
            for key, o in zip(keys, result.options, strict=True)
        ]
        picks = {rule: keys[index] for rule, index in result.picks.items()}
        rows.append(_row(item, variant, picks[s["rule"]], options=options, answer_norm=picks[Rule.ACC_NORM],
                         answer_per_token=picks[Rule.PER_TOKEN], parse_status=ParseStatus.SCORED))
    return rows


def _score_generate(run, model, requests):
    s = run.settings
    recipe = studies.recipe(s, run.mode)
    asked = recipe.asking(s) if recipe else {}
    shown, replies = model.replies([user for _, _, user in requests], **asked)
    rows = []
    for item, variant, user in requests:
        text = shown[user]
        reply = replies[text]
        # A study's own reading (DialogBench's: the easy answer is the run's, the hard one is kept beside it).
        read = recipe.extract(reply, s["language"]) if recipe else None
        if read is not None:
            letter, extra = read
        else:
            letter, extra = extract_option_letter(reply, "".join(variant.options), s["language"]), {}
        options = [{"key": k, "source_key": variant.source_keys[k], "text": t} for k, t in variant.options.items()]
        status = ParseStatus.PARSED if letter else ParseStatus.UNPARSABLE
        # An unparsable reply is wrong, not missing: DialogBench counts it so (and reports how many).
        rows.append(_row(item, variant, letter, options=options, prompt=text, raw_output=reply, parse_status=status,
                         **extra))
    return rows
