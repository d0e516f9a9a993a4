"""The human labels model evaluation reads: accepted final labels to train classifiers on, and imported
raters' ratings for few-shot examples (Huynh et al.).

They are annotation's data, and modeleval never imports annotation (the two apps import benchmarks,
never each other): the platform app connects annotation's selectors here when Django starts
(`humanbaseline.apps`).
"""
from __future__ import annotations

from types import SimpleNamespace

_source = SimpleNamespace()


def connect(*, accepted_final_labels, fed_ratings, has_fed_ratings) -> None:
    _source.accepted_final_labels = accepted_final_labels
    _source.fed_ratings = fed_ratings
    _source.has_fed_ratings = has_fed_ratings


def accepted_final_labels(tasks) -> dict:
    """{item id: (final label, checked)} of the tasks' items in accepted batches."""
    return _source.accepted_final_labels(tasks)


def fed_ratings(task, key) -> list:
    """(item, [ratings]) of the task's items from imported FED ratings (import_ratings --format fed)."""
    return _source.fed_ratings(task, key)


def has_fed_ratings(task) -> bool:
    return _source.has_fed_ratings(task)
