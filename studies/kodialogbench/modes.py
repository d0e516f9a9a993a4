"""KoDialogBench's recipe: zero-shot log-likelihood, the highest summed log-likelihood wins, each task in the
paper's prompting method (or one style forced on every item); the continuations are the class, the candidate
utterance, or the option's number."""
from __future__ import annotations

import json
from collections.abc import Mapping

import studies.kodialogbench.recipe as kodialogbench

from ..recipes import Choice
from ..vocabulary import Rule


class LogLikelihood(Choice):
    settings = {"continuation": "text", "rule": Rule.ACC, "style": kodialogbench.BY_TASK}

    def validate(self, resolved: Mapping) -> None:
        if resolved["style"] not in kodialogbench.STYLES:
            raise ValueError(f"style must be one of {kodialogbench.STYLES}")

    def default_template(self, settings: Mapping) -> tuple[str, str]:
        return (f"kodialogbench-{settings['style']}-ko/2",
                json.dumps(kodialogbench.TEMPLATES, ensure_ascii=False, indent=4))

    def prompt(self, template, item, options, settings) -> str:
        return kodialogbench.prompt_and_continuations(item.dialogue, item.fields or {}, options, settings["style"],
                                                      item.task.dimension)[0]

    def continuations(self, item, options, settings):
        return kodialogbench.prompt_and_continuations(item.dialogue, item.fields or {}, options, settings["style"],
                                                      item.task.dimension)[1], " ", False


RECIPES = {"loglikelihood": LogLikelihood()}
