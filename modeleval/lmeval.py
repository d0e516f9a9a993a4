"""lm-evaluation-harness (0.4.x): a benchmark's multiple-choice tasks exported as lm-eval tasks whose prompts are the
ones our log-likelihood scorer builds, and lm-eval's per-sample output (`--log_samples`) imported as a model run.

Export: one folder holding, per task, `<name>.yaml` (`output_type: multiple_choice`, `doc_to_text: prompt`,
`doc_to_choice: choices`, `doc_to_target: gold`, the run's `target_delimiter`) and `<name>.jsonl`, one doc per item:
`{"id": external id, "task": task slug, "prompt": the rendered prompt, "choices": the continuations scored, "keys":
their option letters, "gold": the gold's index or -1 without one}`; a group `<benchmark>.yaml` over them (the
unweighted mean of tasks); README.md with the command. The prompt and continuations are what a log-likelihood run
with the same settings asks (`modes.multiple_choice.render_mc` and `loglikelihood_request`, the options in the
order the items give them), so HFLM scores the very requests our scorer scores. Where the settings ask for the
tokenizer's special tokens left out (the project's templates: `add_bos_token=False`) or cap the input (the
DialogBench preset: `max_length=2048`), the README's model_args say so.

Import: each line of a samples_<task>_<date>.jsonl is matched to an item by its doc's `id` (our external id), in
the doc's `task` (else the task named, else any task of the benchmark where the id names one item). Its
`filtered_resps` (one [log-likelihood, is-greedy] per choice) become the prediction's options; the answer is
lm-eval's acc pick (highest log-likelihood), `answer_norm` its acc_norm pick (per character of the choice). lm-eval
logs no token counts, so the per-token rule has no pick on an imported run. One transaction: a malformed file
writes nothing and the refusal names the file, line and field; samples that match no item are refused all at
once, their ids listed; the same samples with the same model and settings again add nothing.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.db import transaction

from benchmarks.importers import ImportFailure
from benchmarks.importers.base import json_lines
from core.errors import Code

from . import modes, prompting, verdicts
from .errors import RunError
from .models import Mode, ParseStatus
from .modes.multiple_choice import item_gold, loglikelihood_request, render_mc, variants
from .scorers.choice_rules import Rule, rule_picks

FORMAT = "lm-eval"
MODE = Mode.LOGLIKELIHOOD
LM_EVAL_VERSION = "0.4.13"
METRICS = (Rule.ACC.value, Rule.ACC_NORM.value)  # lm-eval's names for the rules are ours


def task_name(benchmark_slug: str, task_slug: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"hb_{benchmark_slug}_{task_slug}")


@dataclass(frozen=True)
class Exported:
    files: dict  # file name -> text
    group: str  # the group task's name, what `lm_eval --tasks` is given
    n_items: int
    model_args: str  # what HFLM needs beside pretrained= to ask as our scorer asks


def build_export(benchmark, *, tasks=None, settings=None) -> Exported:
    """The lm-eval task files of `benchmark`'s multiple-choice tasks (slugs in `tasks`, default every task a
    log-likelihood run can score), prompted as a log-likelihood run with `settings` (a run's settings, e.g.
    {"preset": "dialogbench"}) prompts them."""
    benchmark, _ = verdicts.resolve(benchmark)
    try:
        resolved = modes.resolve_settings(MODE, prompting.language_of(benchmark.language), settings or {})
    except ValueError as error:
        raise RunError(Code.BAD_SETTINGS, str(error)) from None
    version, template = modes.default_template(MODE, resolved)
    chosen = list(benchmark.tasks.order_by("slug"))
    if tasks:
        unknown = sorted(set(tasks) - {t.slug for t in chosen})
        if unknown:
            raise RunError(Code.UNKNOWN_TASK, f"benchmark {benchmark.slug} has no task {unknown[0]!r}")
        chosen = [t for t in chosen if t.slug in tasks]
        for task in chosen:
            if reason := modes.mode_unsuited(task, MODE, resolved):
                raise RunError(Code.MODE_UNSUITED, reason)
    else:
        chosen = [t for t in chosen if modes.mode_unsuited(t, MODE, resolved) is None]
    if not chosen:
        raise RunError(Code.MODE_UNSUITED, f"benchmark {benchmark.slug} has no multiple-choice task to export")
    files, names, n_items, specials, caps, delimiters = {}, [], 0, set(), set(), set()
    for task in chosen:
        docs = []
        for item in task.items.order_by("id").select_related("task"):
            variant = variants(item, task.primary_key, "as_is")[0]
            context = render_mc(template, item, variant, resolved, MODE)
            (prompt, continuations, delimiter, special), cap = loglikelihood_request(resolved, item, variant, context)
            keys = list(variant.options)
            gold = item_gold(item, task.primary_key)
            docs.append({"id": item.external_id, "task": task.slug, "prompt": prompt, "choices": list(continuations),
                         "keys": keys, "gold": keys.index(gold) if gold in keys else -1})
            specials.add(special)
            caps.add(cap)
            delimiters.add(delimiter)
        if not docs:
            continue
        name = task_name(benchmark.slug, task.slug)
        names.append(name)
        n_items += len(docs)
        files[f"{name}.jsonl"] = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
        config = {
            "task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": f"{name}.jsonl"}},
            "test_split": "test", "output_type": "multiple_choice", "doc_to_text": "prompt",
            "doc_to_choice": "choices", "doc_to_target": "gold", "target_delimiter": delimiter,
            "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in METRICS],
            "metadata": {"version": 1.0},
        }
        files[f"{name}.yaml"] = _yaml(config)
    if not names:
        raise RunError(Code.MODE_UNSUITED, f"benchmark {benchmark.slug}: the tasks chosen have no items")
    group = task_name(benchmark.slug, "all")
    files[f"{group}.yaml"] = _yaml({"group": group, "task": names, "aggregate_metric_list": [
        {"metric": m, "aggregation": "mean", "weight_by_size": False} for m in METRICS],
        "metadata": {"version": 1.0}})
    # lm-eval 0.4.13's HFLM encodes with the tokenizer's own default (special tokens added, as DialogBench's
    # tokenizer.encode) unless add_bos_token is given; add_bos_token=True would make the tokenizer add a BOS it does
    # not add by itself. Our requests without special tokens need add_bos_token=False.
    model_args = ",".join(arg for arg in (
        "add_bos_token=False" if False in specials else "",
        f"max_length={caps.pop()}" if len(caps) == 1 and None not in caps else "") if arg)
    files["README.md"] = _readme(benchmark, names, group, version, resolved, model_args, n_items)
    return Exported(files, group, n_items, model_args)


def _yaml(config) -> str:
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=1000)


def _readme(benchmark, names, group, version, resolved, model_args, n_items) -> str:
    extra = f",{model_args}" if model_args else ""
    return (f"# {benchmark.name}: lm-evaluation-harness tasks\n\n"
            f"{n_items} items in {len(names)} tasks, prompted as HumanBaseline's log-likelihood runs prompt them "
            f"(prompt version {version}, settings {json.dumps(resolved, ensure_ascii=False, sort_keys=True)}).\n\n"
            f"Run from this folder (the data files are named relative to it), with lm-eval {LM_EVAL_VERSION}:\n\n"
            f"    lm_eval --model hf --model_args pretrained=MODEL_FOLDER,dtype=float32{extra} \\\n"
            f"        --include_path . --tasks {group} --log_samples --output_path out\n\n"
            "Import the samples_*.jsonl files it writes under out/ as a model run:\n\n"
            f"    python manage.py import_verdicts --format lm-eval --benchmark {benchmark.slug} --model NAME "
            "out/*/samples_*.jsonl\n")


def export_folder(benchmark, out_dir, **kwargs) -> Exported:
    exported = build_export(benchmark, **kwargs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in exported.files.items():
        (out / name).write_text(text, encoding="utf-8")
    return exported


def export_zip(benchmark, **kwargs) -> tuple[bytes, Exported]:
    exported = build_export(benchmark, **kwargs)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in exported.files.items():
            archive.writestr(f"{exported.group}/{name}", text)
    return buffer.getvalue(), exported


# --- import -------------------------------------------------------------------------------------------------


def _number(value, shown, where, field):
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ImportFailure(shown, where, field, f"a finite log-likelihood, got {json.dumps(value)[:40]}")
    return float(value)


def _greedy(value, shown, where, field):
    if isinstance(value, str) and value in ("True", "False", "true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ImportFailure(shown, where, field, f"true or false, got {json.dumps(value)[:40]}")
    return value


def _row(record, item, shown, where):
    """The Row of one sample on its item."""
    doc = record["doc"]
    options = item.fields.get("options") if isinstance(item.fields, dict) else None
    if not isinstance(options, dict) or len(options) < 2:
        raise ImportFailure(shown, where, "doc.id", f"an item with options; {item.external_id!r} has none")
    resps = record.get("filtered_resps")
    if not isinstance(resps, list) or len(resps) != len(options):
        raise ImportFailure(shown, where, "filtered_resps", f"one [log-likelihood, is-greedy] per option of item "
                                                            f"{item.external_id!r} ({len(options)})")
    keys = doc.get("keys", list(options))
    if not isinstance(keys, list) or sorted(map(str, keys)) != sorted(options):
        raise ImportFailure(shown, where, "doc.keys", f"the item's option letters {sorted(options)}")
    choices = doc.get("choices")
    if choices is not None and (not isinstance(choices, list) or len(choices) != len(keys)
                                or not all(isinstance(c, str) for c in choices)):
        raise ImportFailure(shown, where, "doc.choices", f"{len(keys)} texts, one per option")
    arguments = record.get("arguments")
    if isinstance(arguments, dict):  # as lm-eval 0.4 logs them: {"gen_args_0": {"arg_0": context, "arg_1": ...}}
        ordered = [arguments.get(f"gen_args_{i}") for i in range(len(arguments))]
        arguments = [[a.get("arg_0"), a.get("arg_1")] if isinstance(a, dict) else a for a in ordered]
    if arguments is not None and (not isinstance(arguments, list) or len(arguments) != len(keys)):
        raise ImportFailure(shown, where, "arguments", f"one request per option ({len(keys)})")
    rows = []
    for index, (key, resp) in enumerate(zip(keys, resps, strict=True)):
        field = f"filtered_resps[{index}]"
        if not isinstance(resp, list) or len(resp) != 2:
            raise ImportFailure(shown, where, field, "[log-likelihood, is-greedy]")
        args = arguments[index] if arguments is not None else None
        if args is not None and (not isinstance(args, list) or len(args) < 2
                                 or not all(isinstance(a, str) for a in args[:2])):
            raise ImportFailure(shown, where, f"arguments[{index}]", "[context, continuation] as text")
        text = options[str(key)]
        choice = choices[index] if choices is not None else text
        rows.append({"key": str(key), "source_key": str(key), "text": text,
                     "context": args[0] if args else "", "continuation": args[1] if args else choice,
                     "logprob": _number(resp[0], shown, where, f"{field}[0]"), "n_tokens": None,
                     "n_chars": len(choice), "is_greedy": _greedy(resp[1], shown, where, f"{field}[1]")})
    picks = rule_picks([o["logprob"] for o in rows], [None] * len(rows), [o["n_chars"] for o in rows])
    answer, norm = rows[picks[Rule.ACC]]["key"], rows[picks[Rule.ACC_NORM]]["key"]
    return verdicts.Row(item, answer, None, {"options": rows, "answer_norm": norm, "answer_per_token": "",
                                    "parse_status": ParseStatus.SCORED, "raw_output": ""})


def read_samples(paths, benchmark, task=None, *, names=None):
    """[Row] of the samples files on the benchmark's items (of `task` when given)."""
    shown_names = names or [Path(p).name for p in paths]
    items = verdicts.items_by_external_id(benchmark, task)
    rows, unmatched, seen = [], [], {}
    for path, shown in zip(paths, shown_names, strict=True):
        try:
            for line, record in json_lines(path):
                where = f"line {line}"
                doc = record.get("doc")
                if not isinstance(doc, dict):
                    raise ImportFailure(shown, where, "doc", "the sample's doc (an object)")
                external_id = doc.get("id")
                if isinstance(external_id, bool) or not isinstance(external_id, (str, int)):
                    raise ImportFailure(shown, where, "doc.id", "the item's external id as text or a number")
                external_id = str(external_id)
                doc_task = doc.get("task") if isinstance(doc.get("task"), str) else None
                item = verdicts.match_item(items, external_id, path=shown, where=where, field="doc.id",
                                           task_slug=doc_task)
                if item is None:
                    unmatched.append(external_id)
                    continue
                if item.pk in seen:
                    raise ImportFailure(shown, where, "doc.id", f"each item once; {external_id!r} is at "
                                                                f"{seen[item.pk]} too")
                seen[item.pk] = f"{shown} {where}"
                rows.append(_row(record, item, shown, where))
        except ImportFailure as failure:
            if failure.path != shown:  # json_lines names the path it read: name the file as given
                raise ImportFailure(shown, failure.location, failure.field, failure.expected) from None
            raise
    if unmatched:
        verdicts.refuse_unmatched(", ".join(shown_names), "doc.id", unmatched, benchmark, task)
    if not rows:
        raise ImportFailure(", ".join(shown_names), None, None, "no samples; expected lm-eval's samples_*.jsonl")
    # In the items' order, whatever order the files were given in: the same samples are the same import.
    return sorted(rows, key=lambda row: (row.item.task.slug, row.item.external_id))


@transaction.atomic
def import_lmeval_samples(paths, *, benchmark, task=None, judge, settings=None, names=None,
                          user=None) -> verdicts.Imported:
    """lm-eval's samples files `paths` on `benchmark`'s items as a finished log-likelihood run of the model named
    `judge` (its settings, e.g. lm-eval's model_args, in `settings`). `names`: the files' names in refusals."""
    verdicts.check_importer(user)
    benchmark, task = verdicts.resolve(benchmark, task)
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    names = names or [Path(p).name for p in paths]
    rows = read_samples(paths, benchmark, task, names=names)
    return verdicts.save_run(benchmark=benchmark, mode=MODE, judge=judge, settings=settings or {}, rows=rows,
                             user=user, source={"format": FORMAT, "file": ", ".join(names)},
                             run_settings={"rule": Rule.ACC.value})
