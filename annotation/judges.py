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


class JudgeRuns(Protocol):
    def __call__(self, benchmark):
        """The runs on a benchmark that may be its judge (finished, of a mode that tells how unsure it was)."""


source: Slot[JudgeReadings] = Slot(JudgeReadings)
runs: Slot[JudgeRuns] = Slot(JudgeRuns)


def is_judge_of(run_id, benchmark) -> bool:
    """Whether the run exists and may be the benchmark's judge."""
    return runs.provider(benchmark).filter(pk=run_id).exists()


def item_uncertainty(run_id, item_ids) -> dict:
    """{item id: 0 (sure) to 1} for the items the run has a reading for."""
    return source.provider(run_id, item_ids)
