"""A judge run elsewhere (another tool, an API called by hand): its verdicts per item imported as a finished run,
so that the report's judge card, human-anchored intervals and alternative annotator test read it like a run made
here.

The file is JSON lines, one verdict per line: `{"item": "<the item's external id>", "answer": <the judge's
answer>}` (`"item_id"` is read as `"item"`). The answer is one of the task's answers: an option key of a
multiple-choice item ("A"), a value of the primary question's options, or a rating on its scale (stored as the
run's rating too). The judge's name and settings travel beside the file: the name becomes a model that holds
verdicts, never weights (it cannot run), and the settings are kept on the run as given.

One transaction: a malformed file writes nothing, and the refusal names the file, line and field. The same file
with the same judge, settings and task again adds nothing: the run it made is returned.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from benchmarks.formschema import option_values, question, rating_values
from benchmarks.importers import ImportFailure, labelstudio
from benchmarks.importers.base import json_lines
from benchmarks.models import Benchmark, Item
from core.errors import Code

from .errors import RunError
from .lifecycle import record
from .models import EvalRun, Mode, ModelSpec, ParseStatus, Prediction, RunEventKind, RunState
from .permissions import can_evaluate_models

IMPORTED = ModelSpec.IMPORTED  # the source prefix of a model that holds a judge's imported verdicts
PROMPT_VERSION = "imported"
ITEM_KEYS = ("item", "item_id")


@dataclass(frozen=True)
class Imported:
    run: EvalRun
    created: bool  # False: the same verdicts were imported before, nothing was added
    n_verdicts: int


def _answer_spec(task):
    """(mode, allowed values or None, is a rating) for the task's primary question."""
    spec = question(task.form, task.form["primary"])
    scale = rating_values(spec)
    if scale is not None:
        return Mode.RATING, scale, True
    if spec["type"] == "single_choice":
        return Mode.GENERATE, None, False
    raise RunError(Code.MODE_UNSUITED, f"task {task.slug}: its primary question ({spec['type']}) takes no verdicts "
                                       "to import; a choice or a rating is needed")


def _check_answer(path, where, value, task_spec, item_fields, scale):
    """The answer as stored (text) and its rating (or None), or an ImportFailure naming the line (`where`)."""
    if isinstance(value, bool) and scale is not None and False in scale:
        return str(value).lower(), float(value)
    if scale is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ImportFailure(path, where, "answer", f"a number on the task's scale {scale}, got "
                                                                f"{json.dumps(value)[:40]}")
        if not min(scale) <= value <= max(scale):
            raise ImportFailure(path, where, "answer", f"a rating from {min(scale)} to {max(scale)}, got "
                                                                f"{value}")
        return (str(int(value)) if float(value).is_integer() else str(value)), float(value)
    allowed = [str(v) for v in option_values(task_spec, item_fields)]
    if isinstance(value, (dict, list)) or value is None or str(value) not in allowed:
        raise ImportFailure(path, where, "answer", f"one of {allowed}, got {json.dumps(value)[:40]}")
    return str(value), None


def read_verdicts(path, task, *, name=None):
    """[(line, item, answer, rating)] of the file, every line checked against the task's items and answers.
    `name`: the file's name in refusals (an upload's, not its temporary path)."""
    shown = name or str(path)
    try:
        return check_verdicts(shown, task, ((f"line {line}", record) for line, record in json_lines(path)))
    except ImportFailure as failure:
        if failure.path != shown:  # json_lines names the path it read: name the file as given
            raise ImportFailure(shown, failure.location, failure.field, failure.expected) from None
        raise


def check_verdicts(shown, task, records, *, unparsed_allowed=False):
    """[(where, item, answer, rating)] of (where, {item, answer}) records, each checked against the task's items and
    answers; refusals name `shown` and the record. `unparsed_allowed`: an answer of null is a verdict that could not
    be parsed (answer ""), as runs made here keep them."""
    items = {i.external_id: i for i in task.items.all()}
    mode_spec = question(task.form, task.form["primary"])
    _, scale, _ = _answer_spec(task)
    verdicts, seen = [], {}
    for where, given in records:
        key = next((k for k in ITEM_KEYS if k in given), None)
        if key is None:
            raise ImportFailure(shown, where, "item", "the item's external id")
        external_id = given[key]
        if isinstance(external_id, (dict, list, bool)) or external_id is None:
            raise ImportFailure(shown, where, key, "the item's external id as text or a number")
        external_id = str(external_id)
        if external_id not in items:
            raise ImportFailure(shown, where, key, f"an item of task {task.slug}; {external_id!r} is not one")
        if external_id in seen:
            raise ImportFailure(shown, where, key, f"each item once; {external_id!r} is on {seen[external_id]} too")
        seen[external_id] = where
        if "answer" not in given:
            raise ImportFailure(shown, where, "answer", "the judge's answer")
        if given["answer"] is None and unparsed_allowed:
            verdicts.append((where, items[external_id], "", None))
            continue
        answer, rating = _check_answer(shown, where, given["answer"], mode_spec, items[external_id].fields, scale)
        verdicts.append((where, items[external_id], answer, rating))
    return verdicts


def _judge_model(judge, prefix="") -> ModelSpec:
    """The model standing for an imported judge: made once per name; a model of ours under the name is refused.
    `prefix` sets apart the models of one kind of import (a dataset's runs), so that a dataset's model never takes the
    name of one registered here."""
    name = slugify(f"{prefix}{judge}")[:100]
    if not name:
        raise RunError(Code.BAD_SETTINGS, "the judge needs a name (letters or digits)")
    source = f"{IMPORTED}{prefix}{judge}"[:500]
    spec = ModelSpec.objects.filter(name=name).first()
    if spec is None:
        return ModelSpec.objects.create(name=name, source=source, revision="verdicts imported from elsewhere")
    if spec.source != source:
        raise RunError(Code.MODEL_EXISTS, f"a model named {name!r} is registered already and is not an imported "
                                          "judge; give the judge another name")
    return spec


def _gold(item):
    value = (item.source_gold or {}).get(item.task.form["primary"])
    return None if value is None else str(value)


def check_importer(user) -> None:
    if user is not None and not can_evaluate_models(user):
        raise RunError(Code.FORBIDDEN, "a judge's verdicts and outside runs are imported by staff and researchers")


def resolve(benchmark, task=None):
    """(Benchmark, Task or None) from slugs or objects, refused when unknown."""
    if isinstance(benchmark, str):
        found = Benchmark.objects.filter(slug=benchmark).first()
        if found is None:
            raise RunError(Code.UNKNOWN_BENCHMARK, f"no benchmark {benchmark!r}")
        benchmark = found
    if isinstance(task, str):
        found = benchmark.tasks.filter(slug=task).first()
        if found is None:
            raise RunError(Code.UNKNOWN_TASK, f"benchmark {benchmark.slug} has no task {task!r}")
        task = found
    return benchmark, task


MAX_LISTED = 20  # ids of samples that match no item named in a refusal


def items_by_external_id(benchmark, task=None) -> dict:
    """external id -> [items] of the task, or of every task of the benchmark (an id may name one in each)."""
    items = Item.objects.filter(task=task) if task is not None else Item.objects.filter(task__benchmark=benchmark)
    found = {}
    for item in items.select_related("task"):
        found.setdefault(item.external_id, []).append(item)
    return found


def match_item(items, external_id, *, path, where, field, task_slug=None):
    """The item `external_id` names among `items` (items_by_external_id), in task `task_slug` when given; None
    when it names none; refused when it names one in each of several tasks."""
    found = [i for i in items.get(external_id, []) if task_slug is None or i.task.slug == task_slug]
    if len(found) > 1:
        raise ImportFailure(path, where, field, f"one item; {external_id!r} is an item of tasks "
                                                f"{sorted(i.task.slug for i in found)}: name the task")
    return found[0] if found else None


def refuse_unmatched(path, field, ids, benchmark, task=None):
    """Refuse the records whose ids match no item, naming them (the first MAX_LISTED, then how many more)."""
    scope = f"task {task.slug}" if task is not None else f"benchmark {benchmark.slug}"
    listed = ", ".join(repr(i) for i in ids[:MAX_LISTED])
    more = f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    raise ImportFailure(path, None, field, f"samples that match items of {scope}; {len(ids)} match none: "
                                           f"{listed}{more}")


@dataclass(frozen=True)
class Row:
    """One imported answer on one item: the answer as stored ("" when none could be read), its rating, and the
    Prediction's further fields (options, answer_norm, raw_output, parse_status...)."""
    item: object
    answer: str
    rating: float | None = None
    fields: dict = dataclass_field(default_factory=dict)


def save_run(*, benchmark, mode, judge, settings, source, rows, user=None, run_settings=None,
             model_prefix="") -> Imported:
    """The rows as a finished run of the model standing for `judge` on their items' tasks, unless the same rows
    were imported before with the same judge and settings (that run is returned). `source`: what the import
    was ({"format", "file", ...}), kept on the run with the rows' sha256; `run_settings`: the run's settings
    beside them (e.g. the rule a log-likelihood run's answer follows). Call inside a transaction."""
    if not isinstance(settings, dict):
        raise RunError(Code.BAD_SETTINGS, "the judge's settings must be a JSON object")
    tasks = sorted({row.item.task for row in rows}, key=lambda t: t.slug)
    # A plain verdict is [external id, answer, rating] (as since verdicts were first imported); a row with more
    # fields or tasks beside it adds its task and fields.
    content = json.dumps([[row.item.external_id, row.answer, row.rating]
                          + ([row.item.task.slug, row.fields] if row.fields or len(tasks) > 1 else [])
                          for row in rows], sort_keys=True, ensure_ascii=False, default=str)
    sha = hashlib.sha256(content.encode()).hexdigest()
    spec = ModelSpec.objects.select_for_update().get(pk=_judge_model(judge, model_prefix).pk)  # one import at a time
    imported = {"judge": judge, **source, "sha256": sha}
    run_settings = {**(run_settings or {}), "imported": imported, "judge_settings": settings}
    # A run is the same import when the judge, its settings, the tasks and the answers are.
    same = (EvalRun.objects.filter(model=spec, benchmark=benchmark, mode=mode, settings__imported__sha256=sha)
            .filter(settings__judge_settings=settings))
    for task in tasks:
        same = same.filter(tasks=task)
    if done := same.first():
        return Imported(done, False, len(rows))
    now = timezone.now()
    run = EvalRun.objects.create(
        model=spec, benchmark=benchmark, mode=mode, settings=run_settings, selection={"imported": source["file"]},
        prompt_template="", prompt_sha256="", prompt_version=PROMPT_VERSION, state=RunState.FINISHED,
        items_total=len(rows), items_done=len(rows), chunks_total=0, chunks_done=0, created_by=user,
        started_at=now, finished_at=now)
    run.tasks.set(tasks)
    predictions = []
    for row in rows:
        gold = _gold(row.item)
        status = row.fields.get("parse_status", ParseStatus.PARSED if row.answer else ParseStatus.UNPARSABLE)
        predictions.append(Prediction(
            run=run, item=row.item, answer=row.answer, rating=row.rating, gold=gold or "",
            correct=None if gold is None else row.answer == gold,
            **{"raw_output": row.answer, **row.fields, "parse_status": status}))
    Prediction.objects.bulk_create(predictions)
    record(run, RunEventKind.CREATED, actor=user, items=len(rows), imported=imported)
    record(run, RunEventKind.FINISHED, actor=user, items=len(rows))
    return Imported(run, True, len(rows))


@transaction.atomic
def import_verdicts(path, *, benchmark, task, judge, settings=None, name=None, user=None) -> Imported:
    """The verdicts of `path` (see the module's text) on `task` of `benchmark` (slugs or objects) as a finished run
    of the judge `judge` with its `settings` (a JSON object). `name`: the file's name in refusals."""
    check_importer(user)
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise RunError(Code.BAD_SETTINGS, "the judge's settings must be a JSON object")
    benchmark, task = resolve(benchmark, task)
    if task is None:
        raise RunError(Code.UNKNOWN_TASK, "verdicts are imported on one task: name it")
    _answer_spec(task)  # a task whose answers no verdict can give is refused before its file is read
    verdicts = read_verdicts(path, task, name=name)
    if not verdicts:
        raise ImportFailure(name or str(path), None, None, "no verdicts; expected one JSON object per line")
    return store_verdicts(benchmark, task, verdicts, judge=judge, settings=settings,
                          file_name=name or Path(path).name, user=user)


def store_verdicts(benchmark, task, verdicts, *, judge, settings, file_name, user=None, model_prefix="") -> Imported:
    """Checked verdicts (check_verdicts: [(where, item, answer, rating)]) on one task as a finished run of `judge`,
    inside the caller's transaction; the same verdicts of the same judge, settings and task again return the run
    they made. `model_prefix` sets apart the models of one kind of import (see _judge_model)."""
    mode, _, is_rating = _answer_spec(task)
    rows = [Row(item, answer, rating if is_rating else None) for _, item, answer, rating in verdicts]
    return save_run(benchmark=benchmark, mode=mode, judge=judge, settings=settings, rows=rows, user=user,
                    source={"file": file_name}, model_prefix=model_prefix)


@dataclass(frozen=True)
class CarriedRuns:
    """What the predictions an item file carries came to: one imported run per model and task."""

    runs: tuple  # (judge, task slug, run id, created, verdicts)

    def __str__(self):
        made = [r for r in self.runs if r[3]]
        return (f"{len(made)} model runs imported ({sum(r[4] for r in made)} predictions), "
                f"{len(self.runs) - len(made)} already there")


@transaction.atomic
def import_carried_predictions(path, format_name, benchmark_slug):
    """The predictions of a Label Studio export, each model version's answers to a task's primary question as a
    finished run of a judge of that name (modeleval.verdicts), inside the import's transaction. A prediction
    without an answer to the primary question gives no verdict."""
    if format_name != "labelstudio":
        raise ImportFailure(path, None, "--format", f"the {format_name} format carries no predictions")
    benchmark = Benchmark.objects.get(slug=benchmark_slug)
    _, tasks = labelstudio.records(path)
    stored = {(i.task.slug, i.external_id): i
              for i in Item.objects.filter(task__benchmark=benchmark).select_related("task")}
    groups = {}
    for row in tasks:
        item = stored[(row.record.task, row.record.external_id)]
        primary = item.task.form["primary"]
        spec = question(item.task.form, primary)
        for version, answers, where in row.predictions:
            if primary not in answers:
                continue
            try:
                _, scale, _ = _answer_spec(item.task)
            except RunError as error:
                raise ImportFailure(path, where, "predictions", str(error)) from None
            answer, rating = _check_answer(path, where, answers[primary], spec, item.fields, scale)
            groups.setdefault((version, item.task), []).append((where, item, answer, rating))
    done = []
    for (version, task), verdicts in groups.items():
        try:
            made = store_verdicts(benchmark, task, verdicts, judge=version,
                                  settings={"labelstudio_model_version": version}, file_name=Path(path).name)
        except RunError as error:
            raise ImportFailure(path, verdicts[0][0], "predictions.model_version", str(error)) from None
        done.append((version, task.slug, made.run.pk, made.created, made.n_verdicts))
    return CarriedRuns(tuple(done))
