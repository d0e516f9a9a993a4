"""Figures per task kept by the process that computes stored reports, for the next computation of the same report.

After one label changes, the statistics of every other task are what they were. A section's per-task (or per
campaign x task) figures are kept under a key made of the section's name, the task (and campaign), a digest of
everything the report reads that is not split by task (the items, the code, the
campaigns with their settings, the people's names, the inclusion probabilities, the pairwise judges' steps, the
options: `base_digest`) and a digest of the task's own share of the labels, gold and predictions with the campaigns
whose labels count and the runs that cover the task (`task_digests`): a new gold version that changes one task's gold
leaves the other tasks' figures kept, and so does a changed prediction; a run that finishes leaves the figures of
the tasks it does not cover kept. A later computation
whose key is the same takes the kept figures instead of computing them again; what mixes the tasks (the overall
and per-dimension means, the pooled intervals, agreement and the annotators' tables) is computed from them as in a
computation from scratch. The figures are the same either way: each part reads only its task's rows and the
inputs in the base digest, and every bootstrap or subsample draws from a generator seeded per call from the
options and the task's place among the tasks (in the key), never from a stream shared across tasks.

Kept as pickled bytes (each reader gets its own copy to change), the parts of the latest computation only.
"""
from __future__ import annotations

import hashlib
import pickle
import threading
from operator import itemgetter

import numpy as np
import orjson

DIGEST_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def sha256_of(*parts):
    digest = hashlib.sha256()
    for part in parts:
        digest.update(orjson.dumps(part, option=DIGEST_OPTIONS, default=str))
    return digest.hexdigest()


def base_digest(data, inputs, options):
    """What every kept part depends on beside its task's labels, gold and predictions (`inputs`:
    reports.store.input_hashes)."""
    return sha256_of(inputs["items"], inputs["code"], data.benchmark, data.campaign_id, data.campaigns, data.users,
                     data.inclusion, data.pairwise_steps, options)


def task_digests(rows):
    """task id -> the digest of its share of the people's labels (the human campaigns' current rows in the order
    read: campaign, item, annotator, primary answer), of its items' gold, of which campaigns are the people and of
    its share of the predictions (`prediction_digests`)."""
    values = rows.data.annotations["value"]
    columns = [rows.annotation_array(name) for name in ("campaign_id", "item_id", "annotator_id")]
    human_campaigns = sorted(rows.human_campaigns)  # whose labels count (the gold's choice leaves some out)
    predictions = prediction_digests(rows)
    out = {}
    for task_id, where in rows.human_rows_by_task().items():
        out[task_id] = sha256_of(*(column[where] for column in columns), [values[i] for i in where.tolist()],
                                 [rows.gold[i] for i in rows.items_of[task_id]], human_campaigns,
                                 predictions[task_id])
    return out


def prediction_digests(rows):
    """task id -> the digest of its share of the predictions: every run's prediction rows on its items (each run's
    rows in the order read), the runs that cover the task or predicted on its items (their rows and the names they
    are shown under) and which (run, variant) pairs exist at all (a forced-position table lists a run's variants)."""
    data = rows.data
    pred = data.predictions
    n = len(pred["run_id"])
    task_ids = list(rows.tasks)
    run_ids = sorted({r["id"] for r in data.runs} | set(pred["run_id"]))
    run_index = {run: k for k, run in enumerate(run_ids)}
    task_index = {task: k for k, task in enumerate(task_ids)}
    unknown = len(task_ids)  # rows on items outside the tasks (none in a consistent read) count in no task
    item_task = np.fromiter((task_index.get(t, unknown) for t in data.items["task_id"]), dtype=np.int64,
                            count=len(data.items["task_id"]))
    item_task = np.append(item_task, unknown)
    last = len(item_task) - 1
    positions = np.fromiter((rows.position.get(i, last) for i in pred["item_id"]), dtype=np.int64, count=n)
    runs = np.fromiter(map(run_index.__getitem__, pred["run_id"]), dtype=np.int64, count=n)
    group = item_task[positions] * len(run_ids) + runs
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange((unknown + 1) * len(run_ids) + 1)).tolist()
    names = sorted(pred)
    picked = order.tolist()
    pick = itemgetter(*picked) if n > 1 else (lambda values: tuple(values[i] for i in picked))
    gathered = [pick(pred[name]) for name in names]
    cells = {}  # (task slot, run slot) -> digest of those rows
    for slot in range(unknown + 1):
        for r in range(len(run_ids)):
            start, end = bounds[slot * len(run_ids) + r], bounds[slot * len(run_ids) + r + 1]
            if start < end:
                cells[slot, r] = sha256_of(*(values[start:end] for values in gathered))
    run_rows = {r["id"]: r for r in data.runs}
    variants = sorted(key for key, where in rows.predictions.items() if where)  # a look-up may add an empty one

    def run_of(k):
        run = run_ids[k]
        return [run, run_rows.get(run), rows.run_label.get(run)]

    by_task = {}
    for slot, task_id in enumerate(task_ids):
        shown = [k for k, run in enumerate(run_ids)
                 if (slot, k) in cells or task_id in (run_rows.get(run) or {}).get("task_ids", ())]
        by_task[task_id] = sha256_of([[*run_of(k), cells.get((slot, k))] for k in shown], variants)
    return by_task


class KeptParts:
    """The parts of this process's latest computation ({key: pickled figures}), for the next one."""

    def __init__(self):
        self._lock = threading.Lock()
        self._kept = {}
        self.reused = 0  # parts taken instead of computed (for tests and perf)

    def clear(self):
        with self._lock:
            self._kept = {}

    def size_bytes(self):
        """The bytes the kept parts hold (perf/report_vs_copy.py)."""
        with self._lock:
            return sum(len(raw) for raw in self._kept.values())

    def session(self, base):
        with self._lock:
            return Parts(self, base, self._kept)

    def _keep(self, made):
        with self._lock:
            self._kept = made


class Parts:
    """One computation's parts: those kept from the computation before under the same key, the rest made now.
    `keep()` once the report is built makes them the ones the next computation finds."""

    def __init__(self, owner, base, previous):
        self._owner, self._base, self._previous = owner, base, previous
        self._made = {}

    def get(self, key, make):
        key = (self._base, *key)
        raw = self._previous.get(key)
        if raw is not None:
            self._made[key] = raw
            self._owner.reused += 1
            return pickle.loads(raw)
        value = make()
        self._made[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        return value

    def keep(self):
        self._owner._keep(self._made)


kept_parts = KeptParts()
