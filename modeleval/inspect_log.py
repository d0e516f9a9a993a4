"""An Inspect eval log (inspect_ai's `read_eval_log` format) imported as a model or judge run on the matching items.

What is read of the log: `eval.task`, `eval.model`, `eval.eval_id`, `status` and each sample's `id`, `epoch`,
`scores` and `output.completion`. A sample is matched to the item whose external id is its `id` (in the task
named, else in any task of the benchmark, where it must name one item only). Its answer is the `answer` of one
scorer's score (the scorer named, else the log's first), checked against the item's task as an imported verdict is
(`modeleval.verdicts`): an option key, a value of the primary question's options, or a rating on its scale. A
sample whose scorer read no answer, or an answer the task does not take, is kept as unparsable (counted wrong, as
a generated reply no answer can be read from), its completion kept as the raw output.

The log is read as JSON here, without inspect_ai (whose dependencies pin an older fsspec than the platform's): a
`.json` log as written by `inspect eval --log-format json`, or a `.eval` log (a zip of header.json and
samples/*.json) when its members are stored or deflated; a zstd-compressed `.eval` log is refused with the command
that converts it (`inspect log convert --to json`).

One transaction: a malformed log writes nothing and the refusal names the file, the sample and the field; samples
that match no item are refused all at once, their ids listed. The same log with the same judge and settings again
adds nothing.
"""
from __future__ import annotations

import math
import zipfile
from pathlib import Path

from django.db import transaction

from benchmarks.formschema import question, rating_values
from benchmarks.importers import ImportFailure
from benchmarks.importers.base import MAX_RECORD_BYTES, parse_json, read_text
from core.errors import Code

from .errors import RunError
from .models import ParseStatus
from .verdicts import (
    Imported,
    Row,
    _answer_spec,
    _check_answer,
    check_importer,
    items_by_external_id,
    match_item,
    refuse_unmatched,
    resolve,
    save_run,
)

FORMAT = "inspect"
MAX_MEMBER_BYTES = 20 * MAX_RECORD_BYTES  # a member of an .eval log read into memory


def _member(path, archive, name):
    info = archive.getinfo(name)
    if info.file_size > MAX_MEMBER_BYTES:
        raise ImportFailure(path, name, None, f"a member of {info.file_size:,} bytes, over the limit of "
                                              f"{MAX_MEMBER_BYTES:,}")
    try:
        raw = archive.read(name)
    except NotImplementedError:
        raise ImportFailure(path, name, None, "a compression this reader cannot open (zstd); convert the log with "
                                              "`inspect log convert --to json` and import the .json") from None
    try:
        return parse_json(path, raw.decode("utf-8-sig"), name)
    except UnicodeDecodeError:
        raise ImportFailure(path, name, None, "UTF-8 JSON text") from None


def read_log(path, *, name=None) -> dict:
    """The log as {"status", "eval", "samples"}, from a .json or an .eval file; ImportFailure names what is wrong."""
    shown = name or str(path)
    path = Path(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if "header.json" not in names:
                raise ImportFailure(shown, None, "header.json", "an Inspect .eval log (a zip holding header.json)")
            log = _member(shown, archive, "header.json")
            if not isinstance(log, dict):
                raise ImportFailure(shown, "header.json", None, "a JSON object")
            log["samples"] = [_member(shown, archive, n) for n in sorted(names)
                              if n.startswith("samples/") and n.endswith(".json")]
    else:
        try:
            log = parse_json(shown, read_text(path))
        except ImportFailure as failure:
            raise ImportFailure(shown, failure.location, failure.field, failure.expected) from None
    if not isinstance(log, dict):
        raise ImportFailure(shown, None, None, "an Inspect eval log: a JSON object with eval and samples")
    header = log.get("eval")
    if not isinstance(header, dict):
        raise ImportFailure(shown, None, "eval", "the log's eval header (an object with task and model)")
    for key in ("task", "model"):
        if not isinstance(header.get(key), str) or not header[key]:
            raise ImportFailure(shown, None, f"eval.{key}", "text")
    if log.get("status") != "success":
        raise ImportFailure(shown, None, "status", f"a log of a finished eval (\"success\"), got "
                                                   f"{str(log.get('status'))[:40]!r}")
    samples = log.get("samples")
    if not isinstance(samples, list) or not samples:
        raise ImportFailure(shown, None, "samples", "the eval's samples (the log was written without them: run "
                                                    "inspect eval with samples logged)")
    return log


def _sample_text(sample, key, where, shown):
    value = sample.get(key)
    if not isinstance(value, dict):
        raise ImportFailure(shown, where, key, "an object")
    return value


def _answer(item, raw_answer, where, shown):
    """(answer, rating, parse status) of a scorer's answer on the item's task."""
    spec = question(item.task.form, item.task.form["primary"])
    scale = rating_values(spec)
    if raw_answer is None or (isinstance(raw_answer, str) and not raw_answer.strip()):
        return "", None, ParseStatus.UNPARSABLE
    value = raw_answer
    if scale is not None and isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return "", None, ParseStatus.UNPARSABLE
        if not math.isfinite(value):
            return "", None, ParseStatus.UNPARSABLE
    elif isinstance(value, str):
        value = value.strip()
    try:
        answer, rating = _check_answer(shown, where, value, spec, item.fields, scale)
    except ImportFailure:
        return "", None, ParseStatus.UNPARSABLE
    return answer, rating, ParseStatus.PARSED


def read_rows(log, benchmark, task, *, scorer=None, name=""):
    """[Row] of the log's samples on the benchmark's items, and the scorer read."""
    shown = name
    scorers = [s.get("name") for s in log["eval"].get("scorers") or [] if isinstance(s, dict)]
    chosen = scorer or next((s for s in scorers if isinstance(s, str)), None)
    items = items_by_external_id(benchmark, task)
    rows, unmatched, seen = [], [], {}
    for index, sample in enumerate(log["samples"]):
        if not isinstance(sample, dict):
            raise ImportFailure(shown, f"sample {index + 1}", None, "an object")
        sample_id = sample.get("id")
        if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)):
            raise ImportFailure(shown, f"sample {index + 1}", "id", "the item's external id as text or a number")
        sample_id = str(sample_id)
        epoch = sample.get("epoch", 1)
        where = f"sample {sample_id!r}" + (f" epoch {epoch}" if epoch != 1 else "")
        if sample_id in seen:
            raise ImportFailure(shown, where, "id", f"each sample once (one epoch); {sample_id!r} is there as "
                                                    f"{seen[sample_id]} too")
        seen[sample_id] = where
        item = match_item(items, sample_id, path=shown, where=where, field="id")
        if item is None:
            unmatched.append(sample_id)
            continue
        scores = _sample_text(sample, "scores", where, shown)
        output = sample.get("output") or {}
        if not isinstance(output, dict):
            raise ImportFailure(shown, where, "output", "an object")
        completion = output.get("completion") or ""
        if not isinstance(completion, str):
            raise ImportFailure(shown, where, "output.completion", "text")
        name_ = chosen or next(iter(scores), None)
        score = scores.get(name_) if name_ else None
        if score is not None and not isinstance(score, dict):
            raise ImportFailure(shown, where, f"scores.{name_}", "an object")
        if scorer and score is None:
            raise ImportFailure(shown, where, f"scores.{scorer}", f"a score by scorer {scorer!r}")
        answer, rating, status = _answer(item, (score or {}).get("answer"), where, shown)
        rows.append(Row(item, answer, rating, {"raw_output": completion, "parse_status": status}))
    if unmatched:
        refuse_unmatched(shown, "samples[].id", unmatched, benchmark, task)
    return rows, chosen


@transaction.atomic
def import_inspect_log(path, *, benchmark, task=None, judge=None, scorer=None, settings=None, name=None,
                       user=None) -> Imported:
    """The samples of the Inspect log at `path` on the matching items of `benchmark` (of `task` when given) as a
    finished run of `judge` (default: the log's model) with its `settings`. `name`: the file's name in refusals."""
    check_importer(user)
    benchmark, task = resolve(benchmark, task)
    shown = name or Path(path).name
    log = read_log(path, name=shown)
    rows, chosen = read_rows(log, benchmark, task, scorer=scorer, name=shown)
    modes = {_answer_spec(t)[0] for t in {row.item.task for row in rows}}
    if len(modes) != 1:
        raise RunError(Code.MODE_UNSUITED, "the log's samples are on tasks answered differently (a choice and a "
                                           "rating): import it task by task")
    header = log["eval"]
    source = {"format": FORMAT, "file": shown, "task": header["task"], "model": header["model"],
              "eval_id": str(header.get("eval_id", "")), "scorer": chosen or "",
              "created": str(header.get("created", ""))}
    return save_run(benchmark=benchmark, mode=modes.pop(), judge=judge or header["model"], settings=settings or {},
                    source=source, rows=rows, user=user)
