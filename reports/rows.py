"""The index over a report's plain rows that every section shares (no ORM here)."""
from __future__ import annotations

from collections import defaultdict
from itertools import compress
from operator import and_

import numpy as np

from modeleval import selectors

from . import parts
from .contract import ReportData
from .forms import task_kind

GROUPS = {"annotators": "human annotators", "expert_panel": "expert panel (gold_panel campaigns)",
          "imported": "imported external raters"}


def rater_group(campaign):
    if campaign["source"]:
        return "imported"
    return "expert_panel" if campaign["protocol"] == "gold_panel" else "annotators"


class Rows:
    """Lookups over the plain rows that every section shares."""

    def __init__(self, data: ReportData):
        self.data = data
        items = data.items
        self.tasks = {t["id"]: t for t in data.tasks}
        self.kind = {t["id"]: task_kind(t["form"]) for t in data.tasks}
        self.primary = {t["id"]: t["form"]["primary"] for t in data.tasks}
        self.position = dict(zip(items["id"], range(len(items["id"])), strict=True))
        self.item_task = dict(zip(items["id"], items["task_id"], strict=True))
        self.external_id = dict(zip(items["id"], items["external_id"], strict=True))
        self.domain = dict(zip(items["id"], items["domain"], strict=True))
        self.n_options = dict(zip(items["id"], items["n_options"], strict=True))
        self.items_of = defaultdict(list)
        for item_id, task_id in zip(items["id"], items["task_id"], strict=True):
            self.items_of[task_id].append(item_id)
        if data.gold is not None:
            self.gold = {i: data.gold.get(i) for i in items["id"]}
        else:
            self.gold = {i: (sg or {}).get(self.primary[t])
                         for i, t, sg in zip(items["id"], items["task_id"], items["source_gold"], strict=True)}
        self.source_gold = dict(zip(items["id"], items["source_gold"], strict=True)) if data.gold is None else {}
        self.campaigns = {c["id"]: c for c in data.campaigns}
        self.group = {c["id"]: rater_group(c) for c in data.campaigns}
        # Whose answers are "the humans": the campaign in scope, else every campaign but gold panels
        # (whose majority is the gold itself).
        if data.campaign_id is not None:
            self.human_campaigns = {data.campaign_id}
        else:
            self.human_campaigns = {c for c, g in self.group.items() if g != "expert_panel"}
        # Campaigns whose raters made the gold are not scored against it (reports.gold).
        self.human_campaigns -= {e["campaign_id"] for e in data.gold_choice.get("excluded_campaigns", [])}
        self.position_campaigns = {c["id"] for c in data.campaigns if c.get("raters_are_positions")}
        ann = data.annotations
        self.position_raters = {a for c, a in zip(ann["campaign_id"], ann["annotator_id"], strict=True)
                                if c in self.position_campaigns}
        self.n_annotations = len(ann["item_id"])
        self.current = list(compress(range(self.n_annotations), ann["current"]))
        human = map(self.human_campaigns.__contains__, ann["campaign_id"])
        self.human_rows = list(compress(range(self.n_annotations), map(and_, ann["current"], human)))
        self.human = defaultdict(dict)  # item -> {annotator: primary answer}
        for i in self.human_rows:
            self.human[ann["item_id"][i]][ann["annotator_id"][i]] = ann["value"][i]
        self._by_position = {}  # (run, column, variant) -> the column over all item positions
        self._arrays = {}  # annotation column -> numpy array
        self._shared = {}  # key -> a value several sections derive alike (Rows.shared)
        self.parts = None  # reports.parts.Parts: the figures per task a computation before made (Rows.per_task)
        self.runs = {r["id"]: r for r in data.runs}
        self.run_label = run_labels(data.runs)
        pred = data.predictions
        self.predictions = defaultdict(dict)  # (run, variant) -> {item: row index}
        for i, (run, item, variant) in enumerate(zip(pred["run_id"], pred["item_id"], pred["variant"], strict=True)):
            self.predictions[run, variant][item] = i

    def aligned(self, run_id, column, positions, variant=""):
        """One prediction column of a run at the given item positions (None where it has no prediction)."""
        key = (run_id, column, variant)
        if key not in self._by_position:
            full = np.full(len(self.position), None, dtype=object)
            where, values = self.predictions[run_id, variant], self.data.predictions[column]
            if where:
                column_values = np.empty(len(where), dtype=object)
                column_values[:] = list(map(values.__getitem__, where.values()))
                full[list(map(self.position.__getitem__, where))] = column_values
            self._by_position[key] = full
        return self._by_position[key][positions]

    def shared(self, key, make):
        """`make()`, made once per report under `key`: for what several sections derive from the rows alike. The
        value is shared: readers must not change it."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]

    def human_rows_by_task(self):
        """task id -> the indices of the human campaigns' current labels on its items, in the order read (made once
        per report)."""
        return self.shared("human_rows_by_task", self._human_rows_by_task)

    def _human_rows_by_task(self):
        human = np.array(self.human_rows, dtype=np.int64)
        task_ids = list(self.tasks)
        task_index = {t: n for n, t in enumerate(task_ids)}
        item_task = np.fromiter((task_index.get(t, -1) for t in self.data.items["task_id"]), dtype=np.int64,
                                count=len(self.data.items["task_id"]))
        task_of_row = item_task[self.annotation_array("item_position")[human]] if human.size else human
        order = np.argsort(task_of_row, kind="stable")
        bounds = np.searchsorted(task_of_row[order], np.arange(len(task_ids) + 1))
        return {task_id: human[order[bounds[n]:bounds[n + 1]]] for n, task_id in enumerate(task_ids)}

    def per_task(self, name, task_id, make, *key):
        """`make()`, the figures of section part `name` on one task (`key`: what else tells the parts of a task
        apart), or the same figures kept from the computation before when nothing they read has changed
        (reports.parts). `make` must read only the task's labels, gold and predictions, the runs that cover the
        task and what reports.parts.base_digest covers."""
        if self.parts is None:
            return make()
        digests = self.shared("task_digests", lambda: parts.task_digests(self))
        return self.parts.get((name, task_id, *key, digests[task_id]), make)

    def by_inputs(self, name, make, *inputs):
        """`make()`, or the figures a computation before made under `name` from the same `inputs` (reports.parts):
        for figures that are a function of `inputs` and of what reports.parts.base_digest covers."""
        if self.parts is None:
            return make()
        return self.parts.get((name, parts.sha256_of(*inputs)), make)

    def annotation_array(self, column):
        """An annotation column of ids, numbers or flags as a numpy array (made once, shared by the sections):
        `item_position` is the position of each label's item among the items."""
        if column not in self._arrays:
            ann = self.data.annotations
            if column == "item_position":
                position = self.position
                values = np.fromiter(map(position.__getitem__, ann["item_id"]), dtype=np.int64,
                                     count=self.n_annotations)
            elif column == "current":
                values = np.array(ann[column], dtype=bool)
            else:
                values = np.array(ann[column], dtype=np.int64)
            self._arrays[column] = values
        return self._arrays[column]

    def gold_for(self, task, key):
        """item -> gold of question `key`: a gold version labels the primary question only."""
        if key == task["form"]["primary"]:
            return {i: self.gold[i] for i in self.items_of[task["id"]]}
        return {i: (self.source_gold.get(i) or {}).get(key) for i in self.items_of[task["id"]]}

    def human_answers(self, key):
        """item -> {annotator: answer to question `key`} from the human campaigns' current labels."""
        column = self.data.annotations["answers"][key]
        ann = self.data.annotations
        out = defaultdict(dict)
        for i in self.human_rows:
            if column[i] is not None:
                out[ann["item_id"][i]][ann["annotator_id"][i]] = column[i]
        return out

    def overlap(self):
        """k of the human campaigns when they agree on one, else None."""
        ks = {c["settings"][-1]["overlap"] for cid, c in self.campaigns.items()
              if cid in self.human_campaigns and c["settings"]}
        return ks.pop() if len(ks) == 1 else None

    def drawn_per_task(self):
        """Whether the people's items were drawn as a sample of each task: every human campaign's settings give
        items_per_task (the human baseline's seeded sample per task)."""
        latest = [self.campaigns[c]["settings"][-1] for c in self.human_campaigns
                  if c in self.campaigns and self.campaigns[c]["settings"]]
        return bool(latest) and len(latest) == len(self.human_campaigns) and all(
            s.get("items_per_task") is not None for s in latest)

    def runs_for(self, task_id, modes, as_is=True):
        return [r for r in self.data.runs if r["mode"] in modes and task_id in r["task_ids"]
                and (r["position_policy"] == "as_is") == as_is]


def run_labels(runs):
    """The name each run is shown under (`modeleval.selectors.run_labels`)."""
    return selectors.run_labels((r["id"], r["model__name"], r["mode"]) for r in runs)

