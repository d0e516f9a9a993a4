"""Rows read column-wise: a values_list queryset as {field name: list of values}, through COPY on PostgreSQL,
through the ORM elsewhere."""
from __future__ import annotations

import io
import json
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

from django.core.exceptions import EmptyResultSet
from django.db import connections


def columns(queryset, copy=None):
    """The rows of a values_list queryset as {field name: list of values}, in one query.

    On PostgreSQL the rows travel by `COPY (SELECT ...) TO STDOUT` and are decoded column by column
    (JSON once per distinct value), which is several times faster than row-by-row ORM conversion
    for the hundreds of thousands of labels a large report reads; elsewhere, values_list.
    """
    return read_columns({"rows": queryset}, copy)["rows"]


def read_columns(querysets, copy=None):
    """`columns` of several values_list querysets ({name: queryset or None}), read in the order given. On PostgreSQL
    each table's text is decoded in a second thread while the next one is copied, so that decoding overlaps the
    database's work on the next query (the copies themselves run one after the other on this connection)."""
    present = {name: qs for name, qs in querysets.items() if qs is not None}
    if copy is None:
        copy = all(connections[qs.db].vendor == "postgresql" for qs in present.values())
    if not copy:
        out = {}
        for name, queryset in present.items():
            names = list(queryset.query.selected)  # the values_list order, annotations included
            rows = list(queryset)
            out[name] = ({field: list(values)
                          for field, values in zip(names, zip(*rows, strict=True), strict=True)} if rows
                         else {field: [] for field in names})
        return {name: out.get(name) for name in querysets}
    with ThreadPoolExecutor(max_workers=1) as decoder:
        decoded = {name: decoder.submit(_decoded, *_copied(queryset)) for name, queryset in present.items()}
        return {name: decoded[name].result() if name in decoded else None for name in querysets}


_ESCAPES = {b"\\\\": b"\\", b"\\n": b"\n", b"\\r": b"\r", b"\\t": b"\t", b"\\b": b"\b", b"\\f": b"\f",
            b"\\v": b"\v"}
_ESCAPE = re.compile(rb"\\[\\nrtbfv]")
_NULL = b"\\N"
INTEGER_TYPES = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField", "SmallIntegerField",
                 "PositiveIntegerField", "PositiveBigIntegerField", "PositiveSmallIntegerField"}


def _text(raw):
    """A COPY text field as str (COPY TO escapes only backslash and a few control characters)."""
    if b"\\" in raw:
        raw = _ESCAPE.sub(lambda m: _ESCAPES[m.group()], raw)
    return raw.decode("utf-8")


def _kind(field):
    kind = field.get_internal_type()
    if kind in ("ForeignKey", "OneToOneField"):
        kind = field.target_field.get_internal_type()
    if kind in INTEGER_TYPES:
        return "int"
    return {"FloatField": "float", "BooleanField": "bool", "JSONField": "json"}.get(kind, "text")


def _decode(kind, raw_column):
    """One COPY text column as Python values (NULL -> None)."""
    has_null = _NULL in raw_column
    if kind in ("int", "float") and not has_null:
        return list(map(int if kind == "int" else float, raw_column))
    if kind == "bool":
        return [None if raw == _NULL else raw == b"t" for raw in raw_column]
    decode = {"int": int, "float": float, "json": lambda raw: json.loads(_text(raw)), "text": _text}[kind]
    # Labels and ids repeat: decode each distinct text once (equal JSON values are then one shared
    # object: readers must not mutate them).
    cache = {_NULL: None}
    return [cache[raw] if raw in cache else cache.setdefault(raw, decode(raw)) for raw in raw_column]


def _copied(queryset):
    """(field names, their kinds, the COPY text) of a values_list queryset."""
    names = list(queryset.query.selected)  # the values_list order, annotations included
    compiler = queryset.query.get_compiler(using=queryset.db)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:  # a filter on an empty list (a benchmark without items): nothing to copy
        return names, None, b""
    kinds = [_kind(expression.output_field) for expression, _, _ in compiler.select]
    statement = f"COPY ({sql}) TO STDOUT"
    with connections[queryset.db].cursor() as cursor:
        buffer = io.BytesIO()
        # Logged like any query (debug_sql exists when queries are captured), so counts stay honest.
        logged = cursor.debug_sql(statement, params) if hasattr(cursor, "debug_sql") else nullcontext()
        with logged, cursor.cursor.copy(statement, params) as copy:
            for block in copy:
                buffer.write(block)
    return names, kinds, buffer.getvalue()


def _decoded(names, kinds, text):
    """COPY text as {field name: list of values}."""
    if not text:
        return {name: [] for name in names}
    # Tabs and newlines inside values are escaped, so one split yields every field in row order.
    fields = text[:-1].replace(b"\n", b"\t").split(b"\t")
    raw_columns = [fields[j::len(names)] for j in range(len(names))]
    return {name: _decode(kind, raw_column) for name, kind, raw_column in zip(names, kinds, raw_columns, strict=True)}
