"""The human labels model evaluation reads: accepted final labels to train classifiers on, and imported
raters' ratings for few-shot examples (Huynh et al.).

They are annotation's data, and modeleval never imports annotation (the two apps import benchmarks,
never each other): what it reads is declared here (`HumanLabels`), and the top app fills `source` with
annotation's selectors when Django starts (`humanbaseline.apps`).
"""
from __future__ import annotations

from typing import Protocol

from core.slots import Slot


class HumanLabels(Protocol):
    def accepted_final_labels(self, tasks) -> dict:
        """{item id: (final label, checked)} of the tasks' items in accepted batches."""

    def fed_ratings(self, task, key) -> list:
        """(item, [ratings]) of the task's items from imported FED ratings (import_ratings --format fed)."""

    def has_fed_ratings(self, task) -> bool:
        """Whether any of the task's items has imported FED ratings."""


source: Slot[HumanLabels] = Slot(HumanLabels)


def accepted_final_labels(tasks) -> dict:
    return source.provider.accepted_final_labels(tasks)


def fed_ratings(task, key) -> list:
    return source.provider.fed_ratings(task, key)


def has_fed_ratings(task) -> bool:
    return source.provider.has_fed_ratings(task)
