"""The items and model predictions of a benchmark, kept by the process that computes its reports.

A report reads four row-heavy tables (reports.selectors.row_querysets); after a label changes, the items and the
predictions (most of the reading: the predictions' query picks each log-likelihood run's answer in SQL) are what
they were, and after a run finishes (or a prediction changes) the other runs' predictions are. The database counts
every change to the tables they come from (triggers in the changing transaction): the tasks and items per benchmark
(RowsVersion), each run with its tasks and predictions per run (RunRowsVersion). A computation reads those counts in
its own snapshot and reuses the rows it kept where the count is the one it kept them at: the items when the
benchmark's count is, each run's predictions when that run's count is, reading only the labels, the gold and the
predictions of the runs that changed. The predictions are handed on run by run, in the order of the runs' ids.
Whole-benchmark reports only (a campaign's report reads the items of its batches, which change with the
annotation), on PostgreSQL only (SQLite has no counting triggers), and the rows of one benchmark scope per process
(about 60 MB at 100,000 items x 3 models).
"""
from __future__ import annotations

import sys
import threading
from operator import itemgetter

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import OuterRef, Subquery

from .models import RowsVersion, RunRowsVersion
from .selectors.reading import read_columns
from .selectors.runs import run_queryset


class KeptRows:
    def __init__(self):
        self._lock = threading.Lock()
        # (scope key, items version, items columns, {run id: (run version, prediction columns)})
        self._entry = None
        self.reused = 0  # computations that read kept rows instead of the tables (for tests and perf)
        self.runs_read = 0  # runs whose predictions were read from the table (for tests and perf)

    def clear(self):
        with self._lock:
            self._entry = None

    def read(self, scope, task_ids, querysets):
        """`read_columns(querysets)`, with the items and each run's predictions taken from what this process kept
        when the database says they have not changed since. Call inside the transaction that reads everything
        else."""
        versions = self._versions(scope, task_ids)
        if versions is None:
            return read_columns(querysets)
        items_version, run_versions = versions
        key = (scope.benchmark.pk, tuple(task_ids), scope.gold_version is None)
        with self._lock:
            entry = self._entry
        items_kept = entry is not None and entry[:2] == (key, items_version)
        kept_runs = entry[3] if items_kept else {}
        stale = [run for run, version in run_versions.items()
                 if run not in kept_runs or kept_runs[run][0] != version]
        predictions = querysets["predictions"]
        if stale and len(stale) < len(run_versions):
            predictions = predictions.filter(run_id__in=stale)
        rows = read_columns({**querysets, "items": None if items_kept else querysets["items"],
                             "predictions": predictions if stale else None})
        if items_kept:
            # Fresh dicts over the kept columns: the report reads the columns and never changes them.
            rows["items"] = dict(entry[2])
            self.reused += 1
        read = by_run(rows["predictions"]) if stale else {}
        self.runs_read += len(stale)
        runs = {run: (version, read[run] if run in read else kept_runs[run][1] if run not in stale
                      else empty_like(rows["predictions"]))
                for run, version in sorted(run_versions.items())}
        rows["predictions"] = joined([columns for _, columns in runs.values()], querysets["predictions"])
        with self._lock:
            self._entry = (key, items_version, dict(rows["items"]), runs)
        return rows

    def size_bytes(self):
        """The memory the kept rows hold: their lists and each distinct value once (perf/report_vs_copy.py)."""
        with self._lock:
            entry = self._entry
        if entry is None:
            return 0
        seen, total = set(), 0
        tables = [entry[2], *(columns for _, columns in entry[3].values())]
        for columns in tables:
            for values in columns.values():
                total += sys.getsizeof(values)
                for value in values:
                    if id(value) not in seen:
                        seen.add(id(value))
                        total += sys.getsizeof(value)
        return total

    @staticmethod
    def _versions(scope, task_ids):
        """(the benchmark's items version, {run id in scope: its version}), or None when nothing is kept."""
        if not settings.REPORTS_KEEP_ROWS or connection.vendor != "postgresql" or scope.campaign is not None:
            return None
        items = RowsVersion.objects.filter(benchmark_id=scope.benchmark.pk).values_list("version", flat=True).first()
        version = RunRowsVersion.objects.filter(run_id=OuterRef("pk")).values("version")[:1]
        runs = run_queryset(scope, task_ids).annotate(rows_version=Subquery(version)).values_list("id", "rows_version")
        return items or 0, {run: version or 0 for run, version in runs}


def empty_like(columns):
    return {name: [] for name in columns}


def by_run(columns):
    """{run id: its prediction columns}, each run's rows in the order read."""
    run_ids = columns["run_id"]
    if not run_ids:
        return {}
    ids = np.fromiter(run_ids, dtype=np.int64, count=len(run_ids))
    starts = np.concatenate(([0], np.flatnonzero(ids[1:] != ids[:-1]) + 1))
    ends = np.append(starts[1:], len(ids))
    first = ids[starts]
    if len(set(first.tolist())) == len(first):  # each run's rows in one stretch, as a table's rows usually are
        return {run: {name: values[start:end] for name, values in columns.items()}
                for run, start, end in zip(first.tolist(), starts.tolist(), ends.tolist(), strict=True)}
    order = np.argsort(ids, kind="stable")
    out = {}
    for run in np.unique(ids).tolist():
        where = order[np.searchsorted(ids[order], run):np.searchsorted(ids[order], run, side="right")].tolist()
        pick = itemgetter(*where)
        out[run] = {name: list(pick(values)) if len(where) > 1 else [values[where[0]]]
                    for name, values in columns.items()}
    return out


def joined(tables, queryset):
    """One table of the runs' columns, one run after another."""
    names = list(queryset.query.selected)
    out = {name: [] for name in names}
    for columns in tables:
        for name in names:
            out[name] += columns[name]
    return out


kept_rows = KeptRows()
