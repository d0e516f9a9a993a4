"""What a study prescribes for one mode, in the shape the mode family of that mode asks it (modeleval.modes).

A family finds the recipe of a run with `studies.recipe(settings, mode)` (None for a run of no study) and does
what it says in place of its own way: the settings the preset sets over the family's defaults, the run's default
template, the prompt of an item, how a reply is read. Each method a study leaves alone returns the family's way
(None, or what it was given). Recipes compute nothing that needs a model: what a tokenizer or a database is asked
stays in the family.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class Recipe:
    settings: Mapping[str, Any] = {}  # set over the family's defaults
    template: tuple[str, str] | None = None  # (version, text): the run's default template, where one is fixed

    def validate(self, resolved: Mapping) -> None:
        """ValueError where the run's settings leave the study's way."""

    def default_template(self, settings: Mapping) -> tuple[str, str] | None:
        return self.template


class Choice(Recipe):
    """Multiple choice (loglikelihood, generate): the study's own prompts per task (the run's template is their
    JSON, task name -> prompt), its continuations and how its replies are read."""
    cap: int | None = None  # the input cut from the left to this many tokens (log-likelihood)

    def for_model(self, resolved: Mapping, names: Sequence[str], is_api: bool) -> dict:
        """The settings once the run's model is known (its names, whether it is behind an API)."""
        return dict(resolved)

    def position_policy(self, resolved: Mapping) -> str:
        return "as_is"

    # `item`: what the family reads of an item (its `dialogue`, `fields`, `task.slug`, `task.dimension`), asked
    # only for what the study's prompt uses.
    def prompt(self, template: str, item, options: Mapping[str, str], settings: Mapping) -> str:
        raise NotImplementedError

    def continuations(self, item, options: Mapping[str, str], settings: Mapping) -> tuple[tuple[str, ...], str, bool]:
        """(continuations scored, their separator from the prompt, whether special tokens are added)."""
        return tuple(options.values()), " ", False

    def asking(self, settings: Mapping) -> dict:
        """How the model is asked for a reply (`request`: the API's extra parameters, `render`: how a local
        checkpoint's prompt is laid out); {} for the house's way."""
        return {}

    def extract(self, reply: str, language: str) -> tuple[str | None, dict] | None:
        """(the option letter read, what the prediction keeps beside it); None for the house's reading."""
        return None


class Rating(Recipe):
    """Rating and yes/no: the study's layout of the prompt (`layout`: its version and its strings, the run's
    template being their JSON), the requests built its way (`builds`: "rated_examples", "chat")."""
    layout: tuple[str, Mapping] | None = None
    builds: str = ""  # "" for the house's few-shot requests
    rated_examples: bool = False  # the examples carry imported ratings (FED's), not a published label


class Judge(Recipe):
    """Pairwise and single judgements: the study's template, how a conversation is laid out in it and how a
    reply is read."""
    counts_each_order: bool = False  # each order of showing a result of its own (the report's tables)

    def arena_template(self, template: str, versus_ground_truth: bool) -> str:
        return template

    render = None  # turns -> text; None for the house's layout
    parse = None  # reply -> verdict (single_judge: its reading as a dict); None for the house's reading


class SelfChat(Recipe):
    """Self-chat: the study's settings (over them, `api_settings` for a model behind an API) and its arena."""
    api_settings: Mapping[str, Any] = {}
    prompt_version: str = ""  # the version of its system prompt's text (change the text, change the version)
    arena_min_utterances: int | None = None  # the seeds its arena pairs, by their real dialogue's length
