"""What a run asks the model: default templates and settings per mode, and items rendered into prompts.

Django-free and torch-free, so that validating a run (web process) and scoring it (worker) use the
same code. Templates are the scorers' (`modeleval.scorers.prompts`) with one addition for
multiple choice: `{extras}`, the item's task-specific fields (premise, hypothesis, knowledge...)
between the dialogue and the question, without which NLI or knowledge-grounded items cannot be
answered at all.

Multiple choice by log-likelihood, by default (continuation "text"): the prompt shows the dialogue
and the question and ends with "Answer:"; each option's text, after a space, is the continuation
scored (DialogBench's per-option perplexity of the option text; lm-eval's acc / acc_norm come from
the same numbers). Continuation "letter" lists the options "A. ..." in the prompt and scores " A",
" B"... instead.

A preset (settings {"preset": "dialogbench"}) replaces all that with a study's own evaluation: the
run's template is then the study's prompts per task as JSON (`scorers.dialogbench`).
"""
from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import Mapping

from .scorers import botchat, dialogbench, diqad, huynh, kodialogbench, prompts
from .scorers.positions import circular_permutations, permute_options

MC_MODES = ("loglikelihood", "generate")
RATING_MODES = ("rating", "yes_no")
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
    ("loglikelihood", "en", "text"): ("mc-loglikelihood-text-en/1", MC_TEXT_EN),
    ("loglikelihood", "zh", "text"): ("mc-loglikelihood-text-zh/1", MC_TEXT_ZH),
    ("loglikelihood", "en", "letter"): ("mc-loglikelihood-letter-en/1", MC_LETTER_EN),
    ("loglikelihood", "zh", "letter"): ("mc-loglikelihood-letter-zh/1", MC_LETTER_ZH),
    ("generate", "en", ""): ("mc-generate-en/1", _with_extras(prompts.MC_GENERATE_EN, "\n\nQuestion:")),
    ("generate", "zh", ""): ("mc-generate-zh/1", _with_extras(prompts.MC_GENERATE_ZH, "\n\n问题：")),
    ("rating", "en", ""): ("rating-shot-en/1", prompts.RATING_SHOT),
    ("yes_no", "en", ""): ("yes-no-shot-en/1", prompts.YES_NO_SHOT),
    ("pairwise", "en", ""): ("pairwise-ai-judge-en/1", prompts.PAIRWISE_AI_JUDGE),
    ("pairwise", "en", botchat.PRESET): ("botchat-arena-en/1", botchat.ARENA_TEMPLATE),
    ("single_judge", "en", ""): ("single-ai-judge-en/1", prompts.SINGLE_AI_JUDGE),
    ("single_judge", "en", botchat.PRESET): ("botchat-unieval-en/1", botchat.UNIEVAL_TEMPLATE),
    ("rating", "en", "diqad"): ("diqad-quality-fewshot-en/1", diqad.SHOT),
    ("classify", "en", ""): ("diqad-classifier-input/1",
                             "question:{user turn}response:{expert turn}... spliced, truncated from the left"),
    ("yes_no", "en", "diqad"): ("diqad-verification-fewshot-en/1", diqad.VERIFICATION_SHOT),
    ("rating", "en", huynh.PRESET): ("huynh-rating-fewshot-en/1", huynh.RATING_SHOT),
    ("yes_no", "en", huynh.PRESET): ("huynh-yes-no-fewshot-en/1", huynh.YES_NO_SHOT),
}
# Rating presets: a study's own prompt style, chosen by settings.preset.
RATING_PRESETS = ("", "diqad", huynh.PRESET)
RATING_READS = ("probabilities", "generation")

# batch_size None: the scorers' default for the device (1 on CPU, where padding only adds work).
COMMON_DEFAULTS = {"batch_size": None}
MODE_DEFAULTS = {
    # quality: the question the classifier was trained on (its labels are the model's own).
    "classify": {"quality": ""},
    # rule: which pick is the run's `answer` (DialogBench: lowest mean token NLL = "per_token").
    "loglikelihood": {"continuation": "text", "rule": "per_token"},
    "generate": {"max_new_tokens": 16, "system": ""},
    # read: the rating from the score tokens' probabilities, or generated and read back ("score: N").
    "rating": {"quality": "", "top_k": 3, "fewshot": {"strategy": "none", "k": 0, "fixed_ids": []},
               "preset": "", "dialogue_format": "text", "read": "probabilities", "max_new_tokens": 8, "system": "",
               "seeds": []},
    "yes_no": {"quality": "", "fewshot": {"strategy": "none", "k": 0, "fixed_ids": []},
               "preset": "", "dialogue_format": "text", "seeds": []},
    # rule: how the verdicts of the two orders combine (scorers.pairwise.combine_orders).
    "pairwise": {"max_new_tokens": 16, "system": "", "rule": "consistent", "preset": "",
                 "fewshot": {"strategy": "none", "k": 0, "fixed_ids": []}},
    # judging: "per_n" asks anew at each N (the first N utterances shown); "whole" asks once about the whole
    # dialogue and reads pass@N from the index it names (BotChat's UniEval).
    "single_judge": {"max_new_tokens": 16, "system": "", "preset": "", "judging": "per_n"},
}
# Prompt presets: a study's own evaluation, settings and prompts (settings {"preset": name}).
# DialogBench: its prompts per task (the run's template is their JSON, task name -> prompt), its
# perplexity rule over the option text after prompt_pretrain, its 128 greedy tokens and extraction.
PRESETS = {
    dialogbench.PRESET: {
        "loglikelihood": {"continuation": "text", "rule": "per_token"},
        "generate": {"max_new_tokens": dialogbench.MAX_NEW_TOKENS},
    },
    # KoDialogBench: zero-shot log-likelihood, the highest summed log-likelihood wins, in one of its styles.
    kodialogbench.PRESET: {
        "loglikelihood": {"continuation": "text", "rule": "acc", "style": "direct"},
    },
}
RULES = ("acc", "acc_norm", "per_token")
PAIRWISE_RULES = ("consistent", "sum")
# Pairwise presets: BotChat's arena prompt, its layout of the conversations and its reading of the answer.
PAIRWISE_PRESETS = ("", botchat.PRESET)
# Single-dialogue presets: BotChat's UniEval prompt with its examples, its reading of the answer.
SINGLE_JUDGE_PRESETS = ("", botchat.PRESET)
SINGLE_JUDGINGS = ("per_n", "whole")


# The fields each mode's prompt template is filled with (render_mc; scorers rating, pairwise, single),
# and the fields of the rating modes' instruction (scoring._rating_requests).
TEMPLATE_FIELDS = {
    "loglikelihood": {"instruction", "dialogue", "extras", "question", "options"},
    "generate": {"instruction", "dialogue", "extras", "question", "options"},
    "rating": {"context", "response", "answer", "quality"},
    "yes_no": {"context", "response", "answer", "quality"},
    "pairwise": {"conversation_1", "conversation_2"},
    "single_judge": {"dialogue"},
}
INSTRUCTION_FIELDS = {"quality", "low", "high"}


def check_template(template: str, allowed, what: str = "prompt template") -> None:
    """Refuse a str.format template that could do more than put known fields in place: unknown or
    positional fields, attribute or index access ({dialogue.__class__}, {options[0]}), format specs
    ({dialogue:>2000000000} pads to gigabytes) and conversions (!r, !s, !a). ValueError says which."""
    if not isinstance(template, str):
        raise ValueError(f"{what} must be text")
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ValueError(f"{what}: {error} (write a literal brace as {{{{ or }}}})") from None
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in allowed:
            raise ValueError(f"{what}: unknown field {{{field}}}; the fields are {sorted(allowed)}")
        if spec or conversion:
            raise ValueError(f"{what}: {{{field}}} may not carry a format spec or conversion "
                             f"({'!' + conversion if conversion else ':' + spec})")


def check_run_templates(mode: str, template: str, settings: Mapping) -> None:
    """The run's prompt template, and the instruction where a rating mode formats it."""
    if mode in TEMPLATE_FIELDS:
        check_template(template, TEMPLATE_FIELDS[mode])
    if mode in RATING_MODES:
        check_template(settings.get("instruction", ""), INSTRUCTION_FIELDS, "instruction")


def check_chat_template(text: str) -> None:
    """A model's Jinja chat template must parse in the sandbox the tokenizer renders it in."""
    from jinja2.exceptions import TemplateSyntaxError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    try:
        ImmutableSandboxedEnvironment().parse(text or "")
    except TemplateSyntaxError as error:
        raise ValueError(f"chat template, line {error.lineno}: {error.message}") from None


def language_of(code: str) -> str:
    code = (code or "").lower()
    return "zh" if code.startswith("zh") else "ko" if code.startswith("ko") else "en"


def resolve_settings(mode: str, language: str, given: Mapping | None) -> dict:
    """The run's settings: the mode's defaults overridden by `given`; unknown keys are refused, so
    a typo cannot silently fall back to a default."""
    defaults = {**COMMON_DEFAULTS, **MODE_DEFAULTS[mode], "language": language}
    given = dict(given or {})
    preset = given.get("preset")
    if mode in MC_MODES and language not in DEFAULT_INSTRUCTION and preset is None:
        # Never an English template for items in another language.
        raise ValueError(f"no {mode} template in language {language!r}; pick a study preset written in it "
                         f"({', '.join(sorted(PRESETS))})")
    if mode in MC_MODES:
        defaults["instruction"] = DEFAULT_INSTRUCTION.get(language, "")
    if mode == "rating":
        defaults["instruction"] = prompts.RATING_INSTRUCTION
    if mode == "yes_no":
        defaults["instruction"] = prompts.YES_NO_INSTRUCTION
    if preset is not None and mode in MC_MODES:
        if preset not in PRESETS or mode not in PRESETS[preset]:
            offered = sorted(name for name, modes in PRESETS.items() if mode in modes)
            raise ValueError(f"unknown preset {preset!r} for mode {mode}; expected one of {offered}")
        defaults = {**defaults, **PRESETS[preset][mode], "preset": preset}
        defaults.pop("instruction")  # the preset's prompts carry their own
    if mode in RATING_MODES and preset == "diqad":
        defaults["dialogue_format"] = "json"
        defaults["instruction"] = diqad.INSTRUCTION if mode == "rating" else diqad.VERIFICATION_INSTRUCTION
    if mode in RATING_MODES and preset == huynh.PRESET:
        # Huynh et al.: 3 examples chosen at random, the choice repeated over seeds (one variant each).
        defaults["fewshot"] = {"strategy": "random", "k": huynh.K, "fixed_ids": []}
        defaults["seeds"] = list(huynh.SEEDS)
        defaults["instruction"] = huynh.RATING_INSTRUCTION if mode == "rating" else huynh.YES_NO_INSTRUCTION
    if mode == "pairwise" and preset == botchat.PRESET:
        defaults.update(botchat.PAIRWISE_SETTINGS)
    if mode == "single_judge" and preset == botchat.PRESET:
        defaults.update(botchat.SINGLE_JUDGE_SETTINGS)
    if unknown := sorted(set(given) - set(defaults)):
        raise ValueError(f"unknown settings {unknown} for mode {mode}; expected some of {sorted(defaults)}")
    resolved = {**defaults, **given}
    if "fewshot" in given:
        if not isinstance(given["fewshot"], dict):
            raise ValueError('fewshot must be an object: {"strategy": ..., "k": ..., "fixed_ids": [...]}')
        resolved["fewshot"] = {**defaults["fewshot"], **given["fewshot"]}
    if mode == "loglikelihood":
        if resolved["continuation"] not in ("text", "letter"):
            raise ValueError('continuation must be "text" or "letter"')
        if resolved["rule"] not in RULES:
            raise ValueError(f"rule must be one of {RULES}")
        if preset and resolved["continuation"] != "text":
            raise ValueError(f"the {preset} preset scores the option text (continuation \"text\")")
        if preset == kodialogbench.PRESET and resolved["style"] not in kodialogbench.STYLES:
            raise ValueError(f"style must be one of {kodialogbench.STYLES}")
    if mode in RATING_MODES:
        if resolved["preset"] not in RATING_PRESETS:
            raise ValueError(f"preset must be one of {RATING_PRESETS}")
        if resolved["dialogue_format"] not in ("text", "json"):
            raise ValueError('dialogue_format must be "text" or "json"')
        if mode == "rating" and resolved["read"] not in RATING_READS:
            raise ValueError(f"read must be one of {RATING_READS}")
        seeds = resolved["seeds"]
        if not isinstance(seeds, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seeds) \
                or len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be a list of distinct integers (empty: the run's seed only)")
    if mode == "pairwise" and resolved["rule"] not in PAIRWISE_RULES:
        raise ValueError(f"rule must be one of {PAIRWISE_RULES}")
    if mode == "pairwise" and resolved["preset"] not in PAIRWISE_PRESETS:
        raise ValueError(f"preset must be one of {PAIRWISE_PRESETS}")
    if mode == "single_judge" and resolved["preset"] not in SINGLE_JUDGE_PRESETS:
        raise ValueError(f"preset must be one of {SINGLE_JUDGE_PRESETS}")
    if mode == "single_judge" and resolved["judging"] not in SINGLE_JUDGINGS:
        raise ValueError(f"judging must be one of {SINGLE_JUDGINGS}")
    size = resolved["batch_size"]
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError("batch_size must be a positive integer, or null for the device's default")
    return resolved


def default_template(mode: str, settings: Mapping) -> tuple[str, str]:
    """(version, template text) for a mode and its settings."""
    variant = settings.get("continuation", "") if mode == "loglikelihood" else settings.get("preset", "")
    language = settings.get("language", "en")
    if settings.get("preset") == kodialogbench.PRESET:
        return (f"kodialogbench-{settings['style']}-ko/1",
                json.dumps(kodialogbench.TEMPLATES, ensure_ascii=False, indent=4))
    if settings.get("preset") == dialogbench.PRESET:
        form = preset_form(mode)
        return (f"dialogbench-{form}-{language}/1",
                json.dumps(dialogbench.prompts_for(language, form), ensure_ascii=False, indent=4))
    key = (mode, language, variant)
    if key not in TEMPLATES:
        key = (mode, "en", variant)  # rating prompts exist in English only
    if key not in TEMPLATES:
        raise ValueError(f"no default template for mode {mode}")
    return TEMPLATES[key]


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


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) == {"speaker", "text"}:
        return f"{value['speaker']}: {value['text']}"
    return json.dumps(value, ensure_ascii=False)


def render_extras(fields: Mapping, language: str) -> str:
    labels = [(key, key.replace("_", " ").capitalize()) for key in EXTRA_FIELDS if fields.get(key) not in (None, "")]
    sep = "：" if language == "zh" else ": "
    return "".join(f"\n\n{label}{sep}{_text(fields[key])}" for key, label in labels)


def preset_form(mode: str) -> str:
    """DialogBench's form of prompt for a mode: pretrain (perplexity) or SFT (generation)."""
    return "pretrain" if mode == "loglikelihood" else "sft"


def preset_prompts(template: str) -> dict:
    """A preset run's template: a JSON object of task name -> prompt."""
    try:
        prompts_by_task = json.loads(template)
    except ValueError:
        prompts_by_task = None
    if not isinstance(prompts_by_task, dict) or not all(isinstance(v, str) for v in prompts_by_task.values()):
        raise ValueError("a preset run's template is a JSON object of task name -> prompt")
    return prompts_by_task


def render_mc(template: str, item, variant: Variant, settings: Mapping, mode: str = "") -> str:
    fields = item.fields or {}
    language = settings.get("language", "en")
    if settings.get("preset") == kodialogbench.PRESET:
        return kodialogbench.prompt_and_continuations(item.dialogue, fields, variant.options, settings["style"])[0]
    if settings.get("preset") == dialogbench.PRESET:
        return dialogbench.item_prompt(item.task.slug, fields, item.dialogue, variant.options,
                                       preset_form(mode), preset_prompts(template))
    return template.format(
        instruction=settings.get("instruction", ""),
        dialogue=prompts.render_dialogue(item.dialogue),
        extras=render_extras(fields, language),
        question=fields.get("question") or DEFAULT_QUESTION[language],
        options=prompts.render_options(variant.options),
    )


def context_and_response(item) -> tuple[str, str]:
    """Rating prompts show a context and a response: the item's response field (FED turn level),
    else the dialogue's last turn as the response to the turns before it (FED dialog level)."""
    response = (item.fields or {}).get("response")
    turns = list(item.dialogue)
    if response:
        return prompts.render_dialogue(turns), _text(response)
    if not turns:
        raise ValueError(f"item {item.external_id}: an empty dialogue cannot be rated")
    return prompts.render_dialogue(turns[:-1]), _text(turns[-1])
