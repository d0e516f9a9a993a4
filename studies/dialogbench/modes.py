"""DialogBench's recipes per mode: per-option perplexity after prompt_pretrain (loglikelihood), a chat model's
reply to prompt_SFT read back with the released extraction (generate), each asked as src/evaluate.py's evaluator
for the model asks it."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import studies.dialogbench.recipe as dialogbench

from ..recipes import Choice
from ..vocabulary import Rule

EVALUATOR_CHOICES = (dialogbench.AUTO, dialogbench.RAW, dialogbench.API, *dialogbench.EVALUATORS)
# The evaluators by how they ask a local checkpoint (the others: the model's own chat template).
EVALUATOR_RENDER = {
    dialogbench.RAW: lambda tokenizer, user: (user, True),
    "llama": lambda tokenizer, user: (dialogbench.llama2_prompt(user, tokenizer.bos_token or ""), False),
}


class _Prompts(Choice):
    form = ""  # the form of prompt: pretrain (perplexity) or SFT (generation)

    def default_template(self, settings: Mapping) -> tuple[str, str]:
        language = settings.get("language", "en")
        return (f"dialogbench-{self.form}-{language}/1",
                json.dumps(dialogbench.prompts_for(language, self.form), ensure_ascii=False, indent=4))

    def prompt(self, template, item, options, settings) -> str:
        return dialogbench.item_prompt(item.task.slug, item.fields or {}, item.dialogue, options, self.form,
                                       json.loads(template))


class Perplexity(_Prompts):
    """The option text right after prompt_pretrain, encoded with the tokenizer's special tokens, the input cut to
    its MAX_LEN; the lowest mean token NLL wins."""
    form = "pretrain"
    settings = {"continuation": "text", "rule": Rule.PER_TOKEN}
    cap = dialogbench.MAX_LEN

    def continuations(self, item, options, settings):
        return tuple(options.values()), "", True


class Reply(_Prompts):
    """128 greedy tokens, asked as the evaluator (read from the model when the run starts unless given) asks; the
    easy answer of its extraction is the run's, the hard one kept beside it."""
    form = "sft"
    settings = {"max_new_tokens": dialogbench.MAX_NEW_TOKENS, "evaluator": dialogbench.AUTO}

    def validate(self, resolved: Mapping) -> None:
        if resolved["evaluator"] not in EVALUATOR_CHOICES:
            raise ValueError(f"evaluator must be one of {EVALUATOR_CHOICES}")

    def for_model(self, resolved: Mapping, names: Sequence[str], is_api: bool) -> dict:
        """The evaluator read from the model's names as src/evaluate.py picks one (a model behind an API asked as
        the GPT rows were), refused where the model cannot be asked that way."""
        evaluator = resolved["evaluator"]
        if evaluator == dialogbench.AUTO:
            evaluator = dialogbench.evaluator_for(names, is_api)
        if (evaluator == dialogbench.API) != is_api:
            raise ValueError(f"evaluator {evaluator!r} is for "
                             f"{'models behind an API' if evaluator == dialogbench.API else 'local checkpoints'}; "
                             f"model {names[0]} is {'behind an API' if is_api else 'a local checkpoint'}")
        return {**resolved, "evaluator": evaluator}

    def position_policy(self, resolved: Mapping) -> str:
        return dialogbench.position_policy("generate", resolved)

    def asking(self, settings: Mapping) -> dict:
        if settings["evaluator"] == dialogbench.API:
            return {"request": dialogbench.API_REQUEST}
        return {"render": EVALUATOR_RENDER.get(settings["evaluator"])}

    def extract(self, reply: str, language: str):
        hard, letter = dialogbench.extract_choice(reply, language)
        return letter, {"probabilities": {"extraction": {"hard": hard, "easy": letter}}}


RECIPES = {"loglikelihood": Perplexity(), "generate": Reply()}
