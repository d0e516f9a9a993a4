"""Our own generic shape, the one `export_items` writes; it round-trips exactly.

Line 1:   {"type": "benchmark", "name", "language", "version", "source", "licence", "description"}
Then:     {"type": "task", "slug", "name", "dimension", "instructions", "form"}   (one per task)
Then:     {"type": "item", "task", "external_id", "dialogue", "fields", "meta", "source_gold"}
Keys are sorted and text is written as UTF-8, one object per line.
"""
import itertools
import json

from django.core.exceptions import ValidationError

from ..formschema import validate_form
from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, check_turns, json_lines, require

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('our own shape, as exported: a `benchmark` line, `task` lines, `item` lines.')

HEADER_KEYS = ("name", "language", "version", "source", "licence", "description")


def dumps(record):
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def parse(path):
    """Header and task lines are read at once; item lines stream as the importer consumes them."""
    lines = json_lines(path)
    header, tasks, first_item = {}, {}, None
    for number, record in lines:
        where = f"line {number}"
        kind = require(path, where, record, "type", str)
        if kind == "benchmark":
            if header or tasks:
                raise ImportFailure(path, where, "type", "the benchmark line must come first and only once")
            header = {key: require(path, where, record, key, str, optional=True, default="") for key in HEADER_KEYS}
        elif kind == "task":
            slug = require(path, where, record, "slug", str)
            if slug in tasks:
                raise ImportFailure(path, where, "slug", f"task {slug!r} declared twice")
            form = require(path, where, record, "form", dict)
            try:
                validate_form(form)
            except ValidationError as error:
                raise ImportFailure(path, where, "form", "; ".join(error.messages)) from None
            tasks[slug] = TaskSpec(slug, require(path, where, record, "name", str), form,
                                   require(path, where, record, "dimension", str, optional=True, default=""),
                                   require(path, where, record, "instructions", str, optional=True, default=""))
        else:
            first_item = (number, record)
            break
    return ParsedBenchmark(path, header, list(tasks.values()), parse_items(path, tasks, first_item, lines))


def parse_items(path, tasks, first_item, lines):
    if first_item is None:
        return
    for number, record in itertools.chain([first_item], lines):
        where = f"line {number}"
        kind = require(path, where, record, "type", str)
        if kind in ("benchmark", "task"):
            raise ImportFailure(path, where, "type", f"a {kind} line after the first item; benchmark and task lines "
                                                     "come first")
        if kind != "item":
            raise ImportFailure(path, where, "type", f"expected 'benchmark', 'task' or 'item', got {kind!r}")
        task = require(path, where, record, "task", str)
        if task not in tasks:
            raise ImportFailure(path, where, "task", f"task {task!r} is not declared on an earlier line")
        yield ItemRecord(
            task, require(path, where, record, "external_id", str),
            check_turns(path, where, require(path, where, record, "dialogue", list)),
            require(path, where, record, "fields", dict, optional=True, default={}),
            require(path, where, record, "meta", dict, optional=True, default={}),
            require(path, where, record, "source_gold", dict, optional=True),
            where,
        )


def export_lines(benchmark, tasks, items):
    """Yield the lines of the export: header, tasks by slug, items by task slug and external id."""
    yield dumps({"type": "benchmark", **{key: getattr(benchmark, key) for key in HEADER_KEYS}})
    for task in tasks:
        yield dumps({"type": "task", "slug": task.slug, "name": task.name, "dimension": task.dimension,
                     "instructions": task.instructions, "form": task.form})
    for item in items:
        yield dumps({"type": "item", "task": item.task.slug, "external_id": item.external_id, "dialogue": item.dialogue,
                     "fields": item.fields, "meta": item.meta, "source_gold": item.source_gold})
