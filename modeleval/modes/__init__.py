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
rather than score: their families (`selfchat`, `training`) declare what they write, how they report and the way to
start them (`modeleval.selfchat_runs`, `actions.start_training`); `start_run` refuses them with it.

Every family declares `PLAN` (mode -> `plan.FamilyPlan`: whether it scores, what it writes instead, whether only a
classifier trained here scores in it, and `Report`, how the reports read its runs); `plan(mode, model)` is the one
call that says what a run of a mode is, and `modes_where(...)` which modes share an answer. No module outside this
package compares a run's mode to a mode (tests/modeleval/test_mode_registry.py).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from benchmarks.formschema import question

from .. import bounds
from ..models import Mode
from . import classify, judge, multiple_choice, pairwise, rating, selfchat, single_judge, training
from .base import COMMON_DEFAULTS
from .plan import CPU_QUEUE, GPU_QUEUE, Answer, Plan, Report, Section, Writes

__all__ = ["CPU_QUEUE", "GPU_QUEUE", "Answer", "Plan", "Report", "Section", "Writes"]

SCORING = (multiple_choice, rating, pairwise, single_judge, classify, judge)
FAMILIES = (*SCORING, selfchat, training)
_BY_MODE = {mode: family for family in FAMILIES for mode in family.MODES}
assert set(_BY_MODE) == set(Mode.values), "every mode belongs to one family"

SELFCHAT_REFUSAL = selfchat.REFUSAL
TRAIN_REFUSAL = training.REFUSAL
CLASSIFY_REFUSAL = ("classify mode scores with a classifier trained here; its training run starts it on the test "
                    "split (Train a classifier)")
CLASSIFIER_REFUSAL = "model {model} is a classifier trained here: it scores in classify mode"


def family(mode):
    """The module of the family that owns `mode`."""
    return _BY_MODE[mode]


def plan(mode, model=None) -> Plan:
    """What a run of `mode` is (for `model`, when given: the queue its work goes on, and whether the model can run
    in the mode at all). KeyError for a mode no family owns. Without a model, the model is a prompted one (the runs
    page offers those)."""
    owner = family(mode)
    declared = owner.PLAN[mode]
    refusal = declared.refusal
    trained = model is not None and model.trained_by_id is not None
    if refusal is None and declared.trained_model and not trained:
        refusal = CLASSIFY_REFUSAL
    elif refusal is None and trained and not declared.trained_model:
        refusal = CLASSIFIER_REFUSAL.format(model=model.name)
    declared_fields = {f.name: getattr(declared, f.name) for f in dataclasses.fields(declared) if f.name != "refusal"}
    return Plan(**declared_fields, refusal=refusal,
                mode=mode, family=owner.__name__.rpartition(".")[2],
                queue=CPU_QUEUE if model is not None and model.is_api else GPU_QUEUE)


def modes_where(**wanted) -> tuple[str, ...]:
    """The modes whose plan has these values: `scores`, `writes`, `trained_model`, ... or, for how they report,
    `section`, `answer`, `by_rule`, `stands_in` (e.g. modes_where(section=Section.PAIRWISE))."""
    report_fields = {f.name for f in dataclasses.fields(Report)}

    def matches(mode):
        declared = family(mode).PLAN[mode]
        return all(getattr(declared.report if key in report_fields else declared, key) == value
                   for key, value in wanted.items())

    return tuple(mode for mode in Mode.values if matches(mode))


def reads(mode) -> Report:
    """How the reports read a run of `mode`."""
    return family(mode).PLAN[mode].report


def scores(mode) -> bool:
    return mode in _BY_MODE and family(mode).PLAN[mode].scores


def mode_unsuited(task, mode, settings: Mapping | None = None) -> str | None:
    """Why `mode` cannot score `task` by its primary question, or None when it can. The run form
    offers a benchmark's modes by this rule (`selectors.run_modes`), and `start_run` refuses by it."""
    return family(mode).unsuited(task, mode, question(task.form, task.primary_key), settings)


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


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A scoring run's settings once its model and language are known, and what follows from them."""
    settings: dict
    version: str  # the default template's version
    template: str  # the default template
    position_policy: str  # the option order it is scored in when its caller names none


def prepare(run_plan: Plan, language: str, given: Mapping | None, model) -> Prepared:
    """Settle a scoring run's settings (resolve_settings, then for_model), its default template and option order;
    ValueError says what is wrong with the settings."""
    mode = run_plan.mode
    resolved = for_model(mode, resolve_settings(mode, language, given), model)
    version, template = default_template(mode, resolved)
    return Prepared(resolved, version, template, default_position_policy(mode, resolved))


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
