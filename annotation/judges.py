"""What active selection reads from model runs: a judge run's uncertainty about each item.

Model runs are modeleval's data, and annotation never imports modeleval (the two apps import benchmarks, never
each other): what it reads is declared here (`JudgeReadings`), and the top app fills `source` with modeleval's
selector when Django starts (`humanbaseline.apps`).
"""
from __future__ import annotations

from typing import Protocol

from core.slots import Slot


class JudgeReadings(Protocol):
    def __call__(self, run_id, item_ids) -> dict:
        """{item id: 0 (sure) to 1} for the items the run has a reading for."""


source: Slot[JudgeReadings] = Slot(JudgeReadings)


def item_uncertainty(run_id, item_ids) -> dict:
    """{item id: 0 (sure) to 1} for the items the run has a reading for."""
    return source.provider(run_id, item_ids)
