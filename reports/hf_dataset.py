"""A benchmark as a Hugging Face dataset, and the same dataset back into a benchmark.

The folder holds one Parquet file per configuration, each a `datasets` DatasetDict of one split, `test`, and a dataset
card (README.md) whose YAML front matter lists the configurations, the licence and the task categories, and whose
text states the protocol, the agreement as the report computes it and the gold's citation and method:

    README.md
    benchmark/benchmark-test.parquet    name, language, version, source, licence, description (one row)
    tasks/tasks-test.parquet            task, name, dimension, instructions, form (JSON)
    items/items-test.parquet            task, id, dialogue [{speaker, text}], fields, meta, source_gold (JSON)
    labels/labels-test.parquet          task, item, campaign, annotator, answers, value (JSON): one row per label
    aggregate/aggregate-test.parquet    task, item, campaign, value (JSON), method, status: each campaign's final label
    gold/gold-test.parquet              task, item, value, votes (JSON), method, margin, citation, campaign
    predictions/predictions-test.parquet  task, item, model, run, mode, answer, rating, parse_status, correct

Annotators are pseudonyms (`rater-1`, `rater-2`, ... in the natural order of their user names): a published
dataset names no account of ours, and one person keeps one pseudonym across campaigns. Labels are the current ones
(a rejected round's labels are superseded and left out), predictions those of the finished runs in the order shown
(position variants stay in the report).

Importing reads the same files (a folder, a zip of it, or the Parquet files themselves: each file's columns say
which configuration it is) in one transaction: items through the benchmark importer's rules, labels as the
annotations of external raters `hf-<pseudonym>` in one campaign per campaign name, the gold as a frozen version
chosen for the benchmark (a source gold travels with the items), predictions as finished runs of models
`hf-<model>`. A malformed or hostile file writes nothing and the refusal names the file, the row and the field;
importing the same dataset twice adds nothing. The aggregate is recomputed by each imported campaign's rule, not read.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import stat
import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.text import slugify

from annotation import actions as annotation_actions
from annotation.importers import store_position_ratings
from annotation.models import Annotation, BatchItem
from benchmarks.actions import add_tasks_and_items
from benchmarks.formschema import validate_answers, validate_form
from benchmarks.importers import ImportFailure, ItemRecord, TaskSpec
from benchmarks.importers.base import MAX_RECORD_BYTES, check_turns, parse_json
from benchmarks.importers.jsonl import HEADER_KEYS
from benchmarks.models import Benchmark, Item, canonical_json
from benchmarks.permissions import can_import_items
from core.errors import ActionError
from modeleval.errors import RunError
from modeleval.models import EvalRun, Prediction, RunState
from modeleval.permissions import can_evaluate_models
from modeleval.verdicts import check_verdicts, store_verdicts

from .contract import ReportOptions
from .gold import resolve_gold

SPLIT = "test"
FORMAT = "humanbaseline-hf/1"
SOURCE = "import:hf"  # imported campaigns' source: import:hf:<campaign name>
PREFIX = "hf"  # external raters hf-<pseudonym>, models hf-<model>
MAX_FILE_BYTES = 512 * 1024 * 1024  # a Parquet file, or all of a zip's members together once unpacked
MAX_FILES = 64
NAME = re.compile(r"^[\w.@+-]{1,60}$")  # a pseudonym: a user name's characters (django's validator), short

STRING, JSON_TEXT = pa.string(), pa.string()
COLUMNS = {
    "benchmark": {"name": STRING, **{key: STRING for key in HEADER_KEYS if key != "name"}, "format": STRING},
    "tasks": {"task": STRING, "name": STRING, "dimension": STRING, "instructions": STRING, "form": JSON_TEXT},
    "items": {"task": STRING, "id": STRING,
              "dialogue": pa.list_(pa.struct([("speaker", STRING), ("text", STRING)])),
              "fields": JSON_TEXT, "meta": JSON_TEXT, "source_gold": JSON_TEXT},
    "labels": {"task": STRING, "item": STRING, "campaign": STRING, "annotator": STRING, "answers": JSON_TEXT,
               "value": JSON_TEXT},
    "aggregate": {"task": STRING, "item": STRING, "campaign": STRING, "value": JSON_TEXT, "method": STRING,
                  "status": STRING},
    "gold": {"task": STRING, "item": STRING, "value": JSON_TEXT, "votes": JSON_TEXT, "method": STRING,
             "margin": pa.int64(), "citation": STRING, "campaign": STRING},
    "predictions": {"task": STRING, "item": STRING, "model": STRING, "run": STRING, "mode": STRING, "answer": STRING,
                    "rating": pa.float64(), "parse_status": STRING, "correct": pa.bool_()},
}
CONFIGS = tuple(COLUMNS)
DEFAULT_CONFIG = "items"
# The licences the Hub names by an identifier; any other is `other`, named in the card.
HUB_LICENCES = {"mit", "apache-2.0", "cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0",
                "cc-by-nc-nd-4.0", "odc-by", "odbl", "pddl", "gpl-3.0", "lgpl-3.0", "bsd-3-clause", "openrail"}
TASK_CATEGORIES = {"multiple_choice": "multiple-choice", "rating": "text-classification",
                   "pairwise": "text-classification", "other": "text-classification"}


def parquet_name(config):
    return f"{config}/{config}-{SPLIT}.parquet"


def features(config):
    """The config's `datasets` Features, from the Arrow schema the files are written with."""
    from datasets import Features

    return Features.from_arrow_schema(pa.schema(list(COLUMNS[config].items())))


def _json(value):
    return None if value is None else canonical_json(value)


# --- export ---------------------------------------------------------------------------------------------------


@dataclass
class Exported:
    folder: Path
    counts: dict  # rows per config
    hashes: dict = field(default_factory=dict)  # content_hashes of what was written


def natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def pseudonyms(usernames):
    """{user name: rater-k}, k the name's place in the natural order of the names (rater-2 before rater-10)."""
    return {name: f"rater-{k}" for k, name in enumerate(sorted(set(usernames), key=natural_key), start=1)}


def dataset_rows(benchmark, *, campaign_ids=None, gold_version=None):
    """{config: [row]} of the benchmark: `campaign_ids`, when given, limits the labels and aggregates to those
    campaigns (the ones the reader may read); the gold is the one the benchmark's report cites (reports.gold)."""
    tasks = list(benchmark.tasks.order_by("slug"))
    items = (Item.objects.filter(task__benchmark=benchmark).select_related("task")
             .order_by("task__slug", "external_id"))
    rows = {"benchmark": [{**{key: getattr(benchmark, key) for key in HEADER_KEYS}, "format": FORMAT}],
            "tasks": [{"task": t.slug, "name": t.name, "dimension": t.dimension, "instructions": t.instructions,
                       "form": _json(t.form)} for t in tasks],
            "items": [{"task": i.task.slug, "id": i.external_id, "dialogue": i.dialogue, "fields": _json(i.fields),
                       "meta": _json(i.meta), "source_gold": _json(i.source_gold)}
                      for i in items.iterator(chunk_size=2000)]}
    labels = (Annotation.objects.filter(campaign__benchmark=benchmark, superseded_at__isnull=True)
              .select_related("item__task", "campaign", "annotator"))
    finals = (BatchItem.objects.filter(campaign__benchmark=benchmark, final_value__isnull=False)
              .select_related("item__task", "campaign"))
    if campaign_ids is not None:
        labels, finals = labels.filter(campaign_id__in=campaign_ids), finals.filter(campaign_id__in=campaign_ids)
    labels = list(labels)
    named = pseudonyms(label.annotator.username for label in labels)
    rows["labels"] = sorted(({"task": a.item.task.slug, "item": a.item.external_id, "campaign": a.campaign.name,
                              "annotator": named[a.annotator.username], "answers": _json(a.answers),
                              "value": _json(a.value)} for a in labels),
                            key=lambda r: (r["campaign"], r["task"], r["item"], natural_key(r["annotator"])))
    rows["aggregate"] = sorted(({"task": b.item.task.slug, "item": b.item.external_id, "campaign": b.campaign.name,
                                 "value": _json(b.final_value), "method": b.final_method, "status": b.status}
                                for b in finals), key=lambda r: (r["campaign"], r["task"], r["item"]))
    choice = resolve_gold(benchmark, None, gold_version)
    rows["gold"] = gold_rows(choice, items)
    rows["predictions"] = prediction_rows(benchmark)
    return rows, choice


def gold_rows(choice, items):
    version = choice.version
    if version is None:
        out = []
        for item in items:
            value = (item.source_gold or {}).get(item.task.form["primary"])
            if value is not None:
                out.append({"task": item.task.slug, "item": item.external_id, "value": _json(value), "votes": None,
                            "method": "source", "margin": None, "citation": "source", "campaign": None})
        return out
    labels = version.labels.select_related("item__task").order_by("item__task__slug", "item__external_id")
    return [{"task": g.item.task.slug, "item": g.item.external_id, "value": _json(g.value), "votes": _json(g.votes),
             "method": g.method, "margin": g.margin, "citation": version.citation, "campaign": version.campaign.name}
            for g in labels]


def model_name(run):
    """A run's model as the dataset names it: an imported run's model by the name it was imported under."""
    return (run.settings.get("imported") or {}).get("judge") or run.model.name


def prediction_rows(benchmark):
    runs = EvalRun.objects.filter(benchmark=benchmark, state=RunState.FINISHED).select_related("model")
    out = []
    for run in runs.order_by("pk"):
        name = model_name(run)
        key = f"{name}/{run.mode}/{run.pk}"
        for p in (Prediction.objects.filter(run=run, variant="").select_related("item__task")
                  .order_by("item__task__slug", "item__external_id")):
            out.append({"task": p.item.task.slug, "item": p.item.external_id, "model": name, "run": key,
                        "mode": run.mode, "answer": p.answer or None, "rating": p.rating,
                        "parse_status": p.parse_status, "correct": p.correct})
    return out


def content_hashes(rows):
    """(count, sha256) per part that a round trip keeps: items, labels per annotator, gold, predictions; each part's
    rows in a canonical order, with what an import renames (run keys) left out."""
    parts = {
        "items": [[r["task"], r["id"], r["dialogue"], r["fields"], r["meta"], r["source_gold"]] for r in rows["items"]],
        "labels": [[r["campaign"], r["task"], r["item"], r["annotator"], r["answers"]] for r in rows["labels"]],
        "gold": [[r["task"], r["item"], r["value"], r["method"]] for r in rows["gold"]],
        # A rating task's answer is its rating; a choice task's the option chosen (null: unparsable).
        "predictions": [[r["model"], r["task"], r["item"], r["answer"] if r["rating"] is None else r["rating"]]
                        for r in rows["predictions"]],
    }
    out = {}
    for name, values in parts.items():
        encoded = sorted(orjson.dumps(value, option=orjson.OPT_SORT_KEYS) for value in values)
        out[name] = (len(encoded), hashlib.sha256(b"\n".join(encoded)).hexdigest())
    return out


def export_dataset(benchmark_slug, folder, *, report=None, campaign_ids=None, gold_version=None,
                   options=ReportOptions()) -> Exported:
    """Write the benchmark as a dataset folder (see the module's text). `report`: the report whose agreement the card
    states (the stored one a page serves); without one it is computed here (reports.service)."""
    from datasets import Dataset, DatasetDict, disable_progress_bars

    disable_progress_bars()  # a command's or a page's output, not a terminal's
    benchmark = Benchmark.objects.filter(slug=benchmark_slug).first()
    if benchmark is None:
        raise ImportFailure(folder, None, "--benchmark", f"no benchmark {benchmark_slug!r}")
    if report is None:
        from .service import make_report

        report = make_report(benchmark_slug, None, gold_version, options)
    rows, choice = dataset_rows(benchmark, campaign_ids=campaign_ids, gold_version=gold_version)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for config in CONFIGS:
        if not rows[config]:
            continue  # `datasets` reads no empty split: a configuration without rows is left out, card and files
        table = pa.Table.from_pylist(rows[config], schema=pa.schema(list(COLUMNS[config].items())))
        splits = DatasetDict({SPLIT: Dataset(table).cast(features(config))})
        (folder / config).mkdir(exist_ok=True)
        splits[SPLIT].to_parquet(str(folder / parquet_name(config)))
    (folder / "README.md").write_text(dataset_card(benchmark, report, choice, rows, campaign_ids), encoding="utf-8")
    return Exported(folder, {config: len(rows[config]) for config in CONFIGS}, content_hashes(rows))


def hub_licence(licence):
    """(the card's `license`, extra YAML keys) for the benchmark's licence text."""
    text = (licence or "").strip()
    key = re.sub(r"\s+", "-", text.lower())
    if not text:
        return "unknown", {}
    if key in HUB_LICENCES:
        return key, {}
    return "other", {"license_name": slugify(text)[:60] or "other"}


def _figure(row, key):
    value = row.get(key)
    if value is None:
        return "n/a (" + (row.get("undefined") or {}).get(key, "not computed") + ")"
    return f"{value:.3f}"


def dataset_card(benchmark, report, choice, rows, campaign_ids=None):
    licence, extra = hub_licence(benchmark.licence)
    kinds = {t["kind"] for t in report.get("tasks", [])}
    front = {
        "pretty_name": benchmark.name or benchmark.slug,
        "license": licence, **extra,
        "language": [benchmark.language] if benchmark.language else [],
        "task_categories": sorted({TASK_CATEGORIES.get(kind, "text-classification") for kind in kinds}
                                  or {"text-classification"}),
        "tags": ["human-evaluation", "dialogue", "annotator-labels"],
        "configs": [{"config_name": config, "data_files": [{"split": SPLIT, "path": parquet_name(config)}],
                     **({"default": True} if config == DEFAULT_CONFIG else {})} for config in CONFIGS if rows[config]],
    }
    shown = campaign_ids
    campaigns = [c for c in report.get("campaigns", []) if shown is None or c["campaign_id"] in shown]
    lines = ["---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
             f"# {benchmark.name or benchmark.slug}", ""]
    if benchmark.description:
        lines += [benchmark.description, ""]
    lines += [f"Exported by HumanBaseline ({FORMAT}) from benchmark `{benchmark.slug}`"
              f"{' version ' + benchmark.version if benchmark.version else ''}. Source: {benchmark.source or 'n/a'}.",
              "", "## Licence", "", f"{benchmark.licence or 'No licence was recorded with the benchmark.'}"
              f" (card `license: {licence}`).", "",
              "## Configurations", "", "| config | rows | what |", "| --- | --- | --- |"]
    what = {"benchmark": "the benchmark's name, language, version, source, licence",
            "tasks": "each task's answer form (JSON)", "items": "dialogues, fields, meta and the source gold",
            "labels": "one row per person's label: campaign, annotator (a pseudonym), answers",
            "aggregate": "each campaign's final label per item and how it was reached",
            "gold": "the gold the report cites, with its method and citation",
            "predictions": "the models' answers per item (finished runs)"}
    lines += [f"| `{config}` | {len(rows[config]) or 'none: left out'} | {what[config]} |" for config in CONFIGS]
    lines += ["", "Load with `datasets.load_dataset(<folder or repo>, \"labels\")`, or one file with "
              "`datasets.load_dataset(\"parquet\", data_files=...)`.", "", "## Protocol", ""]
    if not campaigns:
        lines.append("No campaign's labels are included.")
    for campaign in campaigns:
        lines.append(f"- **{campaign['name']}**: protocol `{campaign['protocol']}`"
                     f"{', imported (' + campaign['source'] + ')' if campaign['source'] else ''}; "
                     f"rater group `{campaign['rater_group']}`"
                     f"{'; raters are positions in a file, not people' if campaign['raters_are_positions'] else ''}.")
    lines += ["", "Annotators are pseudonyms (`rater-1`, `rater-2`, ...); one person has one pseudonym across "
              "campaigns. Only current labels are included (a rejected round's labels are superseded).", "",
              "## Agreement", "", "As the HumanBaseline report computes it (Fleiss' kappa with statsmodels on the "
              "items with the modal number of ratings; Krippendorff's alpha with the krippendorff package, missing "
              "ratings allowed).", "",
              "| campaign | task | question | items | raters per item | Fleiss' kappa | band | Krippendorff's alpha "
              "| level |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    agreement = [r for r in report.get("agreement", {}).get("campaigns", [])
                 if shown is None or r["campaign_id"] in shown]
    for r in agreement:
        lines.append(f"| {r['campaign']} | {r['task']} | {r['question']}{' (primary)' if r.get('primary') else ''} "
                     f"| {r['n_items']} | {r.get('n_raters') or 'n/a'} | {_figure(r, 'fleiss_kappa')} "
                     f"| {r.get('band') or 'n/a'} | {_figure(r, 'krippendorff_alpha')} "
                     f"| {r.get('krippendorff_level', '')} |")
    if not agreement:
        lines.append("| - | - | - | 0 | - | - | - | - | - |")
    gold = choice.describe()
    lines += ["", "## Gold", "", f"Citation `{gold['citation']}`, method {gold['method']}: {gold['why']}.", ""]
    if report.get("models"):
        lines += ["## Models", ""] + [f"- `{m['model']}` ({m['mode']})" for m in report["models"]] + [""]
    return "\n".join(lines) + "\n"


def zip_folder(folder, target):
    """The dataset folder as a zip (the report page's download), its files under their folder's names."""
    folder = Path(folder)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(path, path.relative_to(folder).as_posix())
    return target


def push_to_hub(folder, repo_id, token):
    """Upload the folder to a dataset repository of the Hub (made when new, private); the operator's token."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=True, exist_ok=True)
    return api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset",
                             commit_message="HumanBaseline export")


# --- import ---------------------------------------------------------------------------------------------------


@dataclass
class HFImportSummary:
    benchmark: str
    rows: dict  # rows read per config
    items_created: int
    items_unchanged: int
    labels_created: int
    labels_unchanged: int
    gold: str  # the citation of the gold imported, "source" or "none"
    runs_created: int
    runs_unchanged: int

    def __str__(self):
        return (f"{self.benchmark}: {self.items_created} items created, {self.items_unchanged} unchanged; "
                f"{self.labels_created} labels created, {self.labels_unchanged} unchanged; gold {self.gold}; "
                f"{self.runs_created} model runs created, {self.runs_unchanged} already there")


def dataset_files(path, work, shown=None):
    """[(shown name, Parquet path)] of a dataset given as a folder, a zip of one, or a Parquet file; a zip is unpacked
    into `work` member by member, refusing what a hostile archive holds (links, paths outside it, too many or too
    large files)."""
    path = Path(path)
    shown = shown or path.name
    if path.is_dir():
        found = sorted(p for p in path.rglob("*.parquet") if p.is_file() and not p.is_symlink())
        return [(p.relative_to(path).as_posix(), p) for p in found]
    if not path.is_file():
        raise ImportFailure(shown, None, None, "no such file")
    with open(path, "rb") as head:
        magic = head.read(4)
    if magic == b"PAR1":
        return [(shown, path)]
    if not zipfile.is_zipfile(path):
        raise ImportFailure(shown, None, None, "expected a Parquet file of a dataset, or a zip of the dataset's folder")
    out, total = [], 0
    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            wanted = [m for m in members if m.filename.endswith(".parquet")]
            if len(wanted) > MAX_FILES:
                raise ImportFailure(shown, None, None, f"{len(wanted)} Parquet files; at most {MAX_FILES}")
            for number, member in enumerate(wanted):
                name = member.filename
                parts = PurePosixPath(name).parts
                if name.startswith(("/", "\\")) or ".." in parts or "\\" in name or ":" in name:
                    raise ImportFailure(f"{shown}:{name}", None, None, "a path outside the dataset's folder")
                if stat.S_ISLNK(member.external_attr >> 16):
                    raise ImportFailure(f"{shown}:{name}", None, None, "a link; expected a Parquet file")
                total += member.file_size
                if total > MAX_FILE_BYTES:
                    raise ImportFailure(f"{shown}:{name}", None, None, f"more than {MAX_FILE_BYTES:,} bytes unpacked")
                target = Path(work) / f"{number:03d}.parquet"
                with archive.open(member) as source, open(target, "wb") as sink:
                    copied = 0
                    while chunk := source.read(1 << 20):
                        copied += len(chunk)
                        if copied > member.file_size:  # a header that understates what follows
                            raise ImportFailure(f"{shown}:{name}", None, None, "larger than its zip header says")
                        sink.write(chunk)
                out.append((f"{shown}:{name}", target))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as error:
        raise ImportFailure(shown, None, None, f"a broken zip ({error})") from None
    if not out:
        raise ImportFailure(shown, None, None, "no Parquet files in the zip")
    return out


def looks_like_dataset(path):
    """Whether a file is a dataset's Parquet file or a zip (of its folder), by its first bytes."""
    with open(path, "rb") as head:
        return head.read(4) in (b"PAR1", b"PK\x03\x04")


def config_of(shown, schema):
    names = set(schema.names)
    for config, columns in COLUMNS.items():
        if names == set(columns):
            return config
    raise ImportFailure(shown, None, None, f"columns {sorted(names)} are those of no configuration; expected the "
                                           f"columns of one of {', '.join(CONFIGS)}")


def read_tables(files):
    """{config: [(shown, row number, row)]}: every file checked as Parquet, its columns and their types."""
    tables = defaultdict(list)
    for shown, path in files:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ImportFailure(shown, None, None, f"larger than {MAX_FILE_BYTES:,} bytes")
        try:
            parquet = pq.ParquetFile(path)
            schema = parquet.schema_arrow
        except (pa.ArrowException, OSError, ValueError) as error:
            raise ImportFailure(shown, None, None, f"not a readable Parquet file ({str(error)[:200]})") from None
        unpacked = sum(parquet.metadata.row_group(n).total_byte_size for n in range(parquet.metadata.num_row_groups))
        if unpacked > MAX_FILE_BYTES:  # a small file that decompresses into a large one
            raise ImportFailure(shown, None, None, f"{unpacked:,} bytes once decompressed, over the limit of "
                                                   f"{MAX_FILE_BYTES:,}")
        config = config_of(shown, schema)
        for column, kind in COLUMNS[config].items():
            found = schema.field(column).type
            same = found == kind or pa.types.is_null(found) or (pa.types.is_large_string(found) and kind == STRING)
            if not same:
                raise ImportFailure(shown, None, column, f"expected {kind}, got {found}")
        try:
            number = 0
            for batch in parquet.iter_batches(batch_size=2000):
                for row in batch.to_pylist():
                    tables[config].append((shown, number, row))
                    number += 1
        except (pa.ArrowException, OSError, ValueError) as error:
            raise ImportFailure(shown, f"row {number}", None, f"unreadable Parquet data ({str(error)[:200]})") from None
    return tables


def _text(shown, where, row, key, *, optional=False, limit=MAX_RECORD_BYTES):
    value = row.get(key)
    if value is None or value == "":
        if optional:
            return "" if value == "" else None
        raise ImportFailure(shown, where, key, "missing; it is required")
    if len(value) > limit:
        raise ImportFailure(shown, where, key, f"{len(value):,} characters, over the limit of {limit:,}")
    if "\x00" in value:
        raise ImportFailure(shown, where, key, "a NUL character; expected text")
    return value


def _json_value(shown, where, row, key, kind=None, *, optional=False):
    text = _text(shown, where, row, key, optional=optional)
    if text is None:
        return None
    try:
        value = parse_json(shown, text, where)
    except ImportFailure as failure:
        raise ImportFailure(shown, where, key, failure.expected) from None
    if kind is not None and not isinstance(value, kind):
        raise ImportFailure(shown, where, key, f"expected a JSON {'object' if kind is dict else kind.__name__}, got "
                                               f"{type(value).__name__}")
    return value


@dataclass
class Parsed:
    header: dict
    tasks: dict  # slug -> TaskSpec
    items: list  # ItemRecord
    labels: dict  # campaign name -> {(task, item): {annotator: answers}}
    gold: list  # (task, item, value, method, votes, margin, where)
    gold_citation: str
    gold_campaign: str | None
    predictions: dict  # (run key, model, task) -> [(where, {item, answer})]
    rows: dict


def parse_dataset(tables):
    """The dataset's rows checked, field by field, before anything is written."""
    if not tables.get("items"):
        raise ImportFailure("the dataset", None, None, "no items configuration (items/*.parquet)")
    if not tables.get("tasks"):
        raise ImportFailure("the dataset", None, None, "no tasks configuration (tasks/*.parquet)")
    header = {key: "" for key in HEADER_KEYS}
    for shown, number, row in tables.get("benchmark", [])[:1]:
        where = f"row {number}"
        fmt = _text(shown, where, row, "format", optional=True)
        if fmt and fmt != FORMAT:
            raise ImportFailure(shown, where, "format", f"expected {FORMAT!r}, got {fmt[:40]!r}")
        header = {key: _text(shown, where, row, key, optional=True, limit=5000) or "" for key in HEADER_KEYS}
    tasks = {}
    for shown, number, row in tables["tasks"]:
        where = f"row {number}"
        slug = _text(shown, where, row, "task", limit=100)
        if slugify(slug) != slug:
            raise ImportFailure(shown, where, "task", f"expected a slug, got {slug[:40]!r}")
        if slug in tasks:
            raise ImportFailure(shown, where, "task", f"task {slug!r} twice")
        form = _json_value(shown, where, row, "form", dict)
        try:
            validate_form(form)
        except ValidationError as error:
            raise ImportFailure(shown, where, "form", "; ".join(error.messages)) from None
        tasks[slug] = TaskSpec(slug, _text(shown, where, row, "name", limit=200), form,
                               _text(shown, where, row, "dimension", optional=True, limit=100) or "",
                               _text(shown, where, row, "instructions", optional=True) or "")
    items = {}
    for shown, number, row in tables["items"]:
        where = f"row {number}"
        task = _known(shown, where, row, tasks)
        external_id = _text(shown, where, row, "id", limit=200)
        turns = row.get("dialogue")
        check_turns(shown, where, turns)
        record = ItemRecord(task, external_id, turns, _json_value(shown, where, row, "fields", dict),
                            _json_value(shown, where, row, "meta", dict),
                            _json_value(shown, where, row, "source_gold", dict, optional=True), where)
        if (task, external_id) in items:
            raise ImportFailure(shown, where, "id", f"item {external_id!r} of task {task!r} twice")
        items[(task, external_id)] = record
    labels = defaultdict(lambda: defaultdict(dict))
    for shown, number, row in tables.get("labels", []):
        where = f"row {number}"
        key = _item(shown, where, row, tasks, items)
        campaign = _text(shown, where, row, "campaign", limit=90)
        annotator = _text(shown, where, row, "annotator", limit=60)
        if not NAME.match(annotator):
            raise ImportFailure(shown, where, "annotator", "a pseudonym of letters, digits and . @ + - _ (at most 60)")
        answers = _json_value(shown, where, row, "answers", dict)
        record = items[key]
        try:
            validate_answers(tasks[key[0]].form, answers, record.fields, len(record.dialogue))
        except ValidationError as error:
            wrong = {k: v for k, v in error.message_dict.items() if v != ["required"]}
            if wrong:
                question, messages = sorted(wrong.items())[0]
                raise ImportFailure(shown, where, f"answers.{question}", "; ".join(messages)) from None
        if annotator in labels[campaign][key]:
            raise ImportFailure(shown, where, "annotator", f"{annotator} labels item {key[1]!r} twice in campaign "
                                                           f"{campaign!r}")
        labels[campaign][key][annotator] = answers
    gold, citations, gold_campaigns = [], set(), set()
    for shown, number, row in tables.get("gold", []):
        where = f"row {number}"
        task, external_id = _item(shown, where, row, tasks, items)
        value = _json_value(shown, where, row, "value")
        method = _text(shown, where, row, "method", limit=20)
        if method not in ("source", "expert_majority", "annotator_majority", "adjudicated"):
            raise ImportFailure(shown, where, "method", "one of source, expert_majority, annotator_majority, "
                                                        f"adjudicated; got {method[:40]!r}")
        votes = _json_value(shown, where, row, "votes", dict, optional=True) or {}
        margin = row.get("margin") or 0
        if margin < 0 or margin > 10 ** 6:
            raise ImportFailure(shown, where, "margin", f"a count from 0, got {margin}")
        citations.add(_text(shown, where, row, "citation", limit=200))
        gold_campaigns.add(_text(shown, where, row, "campaign", optional=True, limit=90))
        if len(citations) > 1:
            raise ImportFailure(shown, where, "citation", f"one gold per dataset; found {sorted(citations)}")
        gold.append((task, external_id, value, method, votes, margin, where, shown))
    predictions = defaultdict(list)
    for shown, number, row in tables.get("predictions", []):
        where = f"row {number}"
        task, external_id = _item(shown, where, row, tasks, items)
        model = _text(shown, where, row, "model", limit=90)
        run = _text(shown, where, row, "run", limit=200)
        primary = tasks[task].form["primary"]
        spec = next(q for q in tasks[task].form["questions"] if q["key"] == primary)
        answer = row.get("rating") if spec["type"] == "scale" else _text(shown, where, row, "answer", optional=True,
                                                                         limit=50)
        predictions[(run, model, task)].append((shown, where, {"item": external_id, "answer": answer}))
    return Parsed(header, tasks, list(items.values()), labels, gold, next(iter(citations), "none"),
                  next((c for c in gold_campaigns if c), None), predictions,
                  {config: len(rows) for config, rows in tables.items()})


def _known(shown, where, row, tasks):
    task = _text(shown, where, row, "task", limit=100)
    if task not in tasks:
        raise ImportFailure(shown, where, "task", f"task {task[:40]!r} is not in the tasks configuration")
    return task


def _item(shown, where, row, tasks, items):
    key = (_known(shown, where, row, tasks), _text(shown, where, row, "item", limit=200))
    if key not in items:
        raise ImportFailure(shown, where, "item", f"item {key[1][:60]!r} of task {key[0]!r} is not in the items "
                                                  "configuration")
    return key


def import_dataset(paths, benchmark_slug, *, actor=None):
    """Import a dataset into `benchmark_slug` (created when new), all or nothing: `paths`, a folder, a zip of one or a
    Parquet file, or a list of them or of (path, the name refusals give it: an upload's). `actor`: the person
    importing through a page (checked)."""
    if actor is not None and not can_import_items(actor):
        raise PermissionDenied("Only staff or holders of benchmarks.add_item may import data.")
    paths = [p if isinstance(p, tuple) else (p, Path(p).name)
             for p in (paths if isinstance(paths, (list, tuple)) and not isinstance(paths, tuple) else [paths])]
    if not benchmark_slug or slugify(benchmark_slug) != benchmark_slug:
        raise ImportFailure(paths[0][1], None, "--benchmark", "expected a slug (lowercase letters, digits, hyphens), "
                                                              f"got {benchmark_slug!r}")
    work = Path(tempfile.mkdtemp(prefix="hb-hf-"))
    try:
        files = []
        for number, (one, shown) in enumerate(paths):
            unpacked = work / str(number)
            unpacked.mkdir()
            files += dataset_files(one, unpacked, shown)
        parsed = parse_dataset(read_tables(files))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if parsed.predictions and actor is not None and not can_evaluate_models(actor):
        raise PermissionDenied("A dataset with models' predictions is imported by staff and researchers.")
    return store_dataset(parsed, benchmark_slug, actor=actor, shown=paths[0][1])


@transaction.atomic
def store_dataset(parsed, benchmark_slug, *, actor, shown):
    header = dict(parsed.header)
    header["name"] = header["name"] or benchmark_slug
    benchmark, _ = Benchmark.objects.select_for_update().get_or_create(slug=benchmark_slug, defaults=header)
    _, counts = add_tasks_and_items(benchmark, list(parsed.tasks.values()), parsed.items, source=shown)
    stored = {(i.task.slug, i.external_id): i for i in Item.objects.filter(task__benchmark=benchmark)
              .select_related("task")}
    created = unchanged = 0
    campaigns = {}
    for campaign_name, by_item in sorted(parsed.labels.items()):
        raters = sorted({a for answers in by_item.values() for a in answers}, key=natural_key)
        _refuse_people(shown, raters)
        rows = [(stored[key], [answers.get(rater) for rater in raters]) for key, answers in sorted(by_item.items())]
        summary = store_position_ratings(shown, benchmark, rows, 0, format_name="hf",
                                         source=f"{SOURCE}:{campaign_name}"[:100], prefix=PREFIX, name=campaign_name,
                                         description="Labels imported from a Hugging Face dataset; raters are the "
                                                     "dataset's pseudonyms.", rater_names=raters)
        created, unchanged = created + summary.annotations_created, unchanged + summary.annotations_unchanged
        campaigns[campaign_name] = summary.campaign
    gold = "source" if parsed.gold_citation == "source" else "none"
    if parsed.gold and parsed.gold_citation != "source":
        gold = _store_gold(parsed, benchmark, stored, campaigns, actor)
    runs_created = runs_unchanged = 0
    for (run, model, task_slug), records in sorted(parsed.predictions.items()):
        task = benchmark.tasks.get(slug=task_slug)
        first_shown = records[0][0]
        try:
            verdicts = check_verdicts(first_shown, task, ((f"{where}", record) for _, where, record in records),
                                      unparsed_allowed=True)
            done = store_verdicts(benchmark, task, verdicts, judge=model, settings={"dataset_run": run},
                                  file_name=first_shown, user=actor, model_prefix=f"{PREFIX}-")
        except RunError as error:
            raise ImportFailure(first_shown, records[0][1], "model", str(error)) from None
        runs_created += done.created
        runs_unchanged += not done.created
    return HFImportSummary(benchmark.slug, parsed.rows, counts["new"], counts["unchanged"], created, unchanged, gold,
                           runs_created, runs_unchanged)


def _refuse_people(shown, raters):
    """A pseudonym whose external rater would be an account someone signs in with is refused: a file never adds
    labels to a person's own account."""
    taken = get_user_model().objects.filter(username__in=[f"{PREFIX}-{r}" for r in raters], is_active=True)
    if taken.exists():
        raise ImportFailure(shown, None, "annotator", f"{taken.first().username} is a person's account here; "
                                                      "rename the dataset's annotators")


def _store_gold(parsed, benchmark, stored, campaigns, actor):
    """The dataset's gold as a frozen version chosen for the benchmark, made from the campaign it names (an imported
    campaign of that name; one without labels is made for it)."""
    from annotation.models import Campaign, Protocol

    name = parsed.gold_campaign or "gold"
    campaign_id = campaigns.get(name)
    if campaign_id is None:
        source = f"{SOURCE}:{name}"[:100]
        campaign = Campaign.objects.filter(benchmark=benchmark, source=source).first()
        if campaign is None:
            try:
                campaign = annotation_actions.create_campaign(
                    actor=None, name=name, benchmark=benchmark, protocol=Protocol.GOLD_PANEL, source=source,
                    description="The campaign a Hugging Face dataset's gold names; its labels were not in the dataset.")
            except ActionError as error:
                raise ImportFailure(parsed.gold[0][7], parsed.gold[0][6], "campaign", error.detail) from None
    else:
        campaign = Campaign.objects.get(pk=campaign_id)
    labels = [(stored[(task, item)], value, method, votes, margin)
              for task, item, value, method, votes, margin, _, _ in parsed.gold]
    version, _ = annotation_actions.import_gold_version(campaign, labels, note=f"imported from {parsed.gold_citation}")
    return version.citation
