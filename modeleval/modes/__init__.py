"""The run modes that score items, one module per family, each holding everything about its modes:

- `MODES`, `DEFAULTS` (settings per mode), `TEMPLATES` ((mode, language, variant) -> (version, text)),
  `ORDERS_OPTIONS` (whether position policies apply), `api_need(mode, settings)` (what a model behind an
  API must serve, None where no API model can);
- `unsuited(task, mode, spec, settings)`: why the task's primary question cannot be scored, or None;
- `defaults(mode, language, preset)`, `validate(mode, resolved)`: the run's settings;
- `default_template(mode, settings)`, `check_run_template(mode, template, settings)`: its prompt;
- `check_run(mode, settings, tasks, item_ids)`: refusals that read the database (RunError);
- `requests(run, items)`, `score(run, model, requests)`: the worker's two steps, `model` being
  `modeleval.inference.ModelCalls` (replies, next-word probabilities, option log-likelihoods, classes).

This package is torch-free: the web process validates runs with it, and only `modeleval.inference`,
which the worker imports on its first chunk, loads a model. Self-chat and training runs write
rather than score; they have modules of their own (`modeleval.selfchat_runs`, `modeleval.training`) and are
refused here with the way to start them.
"""
from __future__ import annotations

from typing import Mapping

from benchmarks.formschema import question, rating_scale

from .. import bounds
from ..models import Mode
from . import classify, multiple_choice, pairwise, rating, single_judge
from .base import COMMON_DEFAULTS

FAMILIES = (multiple_choice, rating, pairwise, single_judge, classify)
_BY_MODE = {mode: family for family in FAMILIES for mode in family.MODES}

SELFCHAT_REFUSAL = ("a self-chat run writes items rather than scoring them: start one with Start a self-chat run "
                    "on the runs page (or manage.py selfchat)")
CLASSIFY_REFUSAL = ("classify mode scores with a classifier trained here; its training run starts it on the test "
                    "split (Train a classifier)")
TRAIN_REFUSAL = "a training run trains a classifier rather than scoring: use Train a classifier (manage.py train)"


def family(mode):
    """The module of the family that scores `mode`; KeyError for self-chat and training."""
    return _BY_MODE[mode]


def scores(mode) -> bool:
    return mode in _BY_MODE


def mode_unsuited(task, mode, settings: Mapping | None = None) -> str | None:
    """Why `mode` cannot score `task` by its primary question, or None when it can. The run form
    offers a benchmark's modes by this rule (`selectors.run_modes`), and `start_run` refuses by it."""
    spec = question(task.form, task.primary_key)
    if mode == Mode.TRAIN:
        return TRAIN_REFUSAL if rating_scale(spec) is None else None
    return family(mode).unsuited(task, mode, spec, settings)


def resolve_settings(mode: str, language: str, given: Mapping | None) -> dict:
    """The run's settings: the mode's defaults (its preset's, when one is given) overridden by `given`;
    unknown keys are refused, so a typo cannot silently fall back to a default."""
    scorer = family(mode)
    given = dict(given or {})
    defaults = {**COMMON_DEFAULTS, **scorer.defaults(mode, language, given.get("preset")), "language": language}
    if unknown := sorted(set(given) - set(defaults)):
        raise ValueError(f"unknown settings {unknown} for mode {mode}; expected some of {sorted(defaults)}")
    resolved = {**defaults, **given}
    if "fewshot" in given:
        if not isinstance(given["fewshot"], dict):
            raise ValueError('fewshot must be an object: {"strategy": ..., "k": ..., "fixed_ids": [...]}')
        resolved["fewshot"] = {**defaults["fewshot"], **given["fewshot"]}
    scorer.validate(mode, resolved)
    bounds.check(resolved, bounds.SCORING)  # batch_size null: the device's default
    bounds.check_seeds(resolved.get("seeds"))
    return resolved


def for_model(mode: str, resolved: Mapping, model) -> dict:
    """The run's settings once its model is known (a family may read something from the model, e.g. how a
    study asked models of its kind); ValueError says why the model cannot be asked so."""
    settle = getattr(family(mode), "for_model", None)
    return settle(mode, dict(resolved), model) if settle else dict(resolved)


def default_position_policy(mode: str, resolved: Mapping) -> str:
    """The option order a run is scored in when its caller names none: the family's (a study's) choice, else as
    the items give them."""
    choose = getattr(family(mode), "default_position_policy", None)
    return choose(mode, resolved) if choose else "as_is"


def default_template(mode: str, settings: Mapping) -> tuple[str, str]:
    """(version, template text) for a mode and its settings."""
    return family(mode).default_template(mode, settings)


def check_run_template(mode: str, template: str, settings: Mapping) -> None:
    """The run's prompt template (and the instruction a rating mode formats): ValueError says what is wrong."""
    family(mode).check_run_template(mode, template, settings)


def api_refusal(capabilities: Mapping, mode: str, settings: Mapping | None = None) -> str | None:
    """Why an endpoint with these capabilities cannot serve the mode correctly, or None when it can."""
    if mode == Mode.LOGLIKELIHOOD and (capabilities.get("prompt_logprobs") or {}).get("ok"):
        return ("log-likelihood through an API endpoint is not implemented: its prompt log-probabilities "
                "passed the probe, score this model in-process instead")
    need = family(mode).api_need(mode, settings) if scores(mode) else None
    if need is None:
        return f"mode {mode} is not available for models behind an API"
    found = capabilities.get(need)
    if not found:
        return f"mode {mode} needs {need}, which was not probed for this model: probe it again"
    if not found.get("ok"):
        return f"mode {mode} needs {need}, which the endpoint cannot serve correctly: {found.get('reason')}"
    return None
