"""The items and model predictions of a benchmark, kept by the process that computes its reports.

A report reads four row-heavy tables (reports.selectors.row_querysets); after a label changes, the items and the
predictions (most of the reading: the predictions' query picks each log-likelihood run's answer in SQL) are what
they were. The database counts every change to the tables they come from (RowsVersion, bumped by triggers in
the changing transaction); a computation reads that count in its own snapshot and reuses the rows it kept when the
count is the one it kept them at, reading only the labels and the gold. Whole-benchmark reports only (a campaign's
report reads the items of its batches, which change with the annotation), on PostgreSQL only (SQLite has no
counting triggers), and the rows of one benchmark scope per process (about 60 MB at 100,000 items x 3 models).
"""
from __future__ import annotations

import sys
import threading

from django.conf import settings
from django.db import connection

from .models import RowsVersion
from .selectors.reading import read_columns

KEPT = ("items", "predictions")


class KeptRows:
    def __init__(self):
        self._lock = threading.Lock()
        self._entry = None  # (scope key, rows version, {name: columns})
        self.reused = 0  # computations that read the kept rows instead of the tables (for tests and perf)

    def clear(self):
        with self._lock:
            self._entry = None

    def read(self, scope, task_ids, querysets):
        """`read_columns(querysets)`, with the items and predictions taken from what this process kept when the
        database says they have not changed since. Call inside the transaction that reads everything else."""
        version = self._version(scope)
        if version is None:
            return read_columns(querysets)
        key = (scope.benchmark.pk, tuple(task_ids), scope.gold_version is None)
        with self._lock:
            entry = self._entry
        if entry is not None and entry[:2] == (key, version):
            rows = read_columns({name: None if name in KEPT else qs for name, qs in querysets.items()})
            # Fresh dicts over the kept columns: the report reads the columns and never changes them.
            rows.update({name: dict(columns) for name, columns in entry[2].items()})
            self.reused += 1
            return rows
        rows = read_columns(querysets)
        with self._lock:
            self._entry = (key, version, {name: dict(rows[name]) for name in KEPT})
        return rows

    def size_bytes(self):
        """The memory the kept rows hold: their lists and each distinct value once (perf/report_vs_copy.py)."""
        with self._lock:
            entry = self._entry
        if entry is None:
            return 0
        seen, total = set(), 0
        for columns in entry[2].values():
            for values in columns.values():
                total += sys.getsizeof(values)
                for value in values:
                    if id(value) not in seen:
                        seen.add(id(value))
                        total += sys.getsizeof(value)
        return total

    @staticmethod
    def _version(scope):
        if not settings.REPORTS_KEEP_ROWS or connection.vendor != "postgresql" or scope.campaign is not None:
            return None
        row = RowsVersion.objects.filter(benchmark_id=scope.benchmark.pk).values_list("version", flat=True).first()
        return row or 0


kept_rows = KeptRows()
