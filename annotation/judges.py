"""What active selection reads from model runs: a judge run's uncertainty about each item.

Model runs are modeleval's data, and annotation never imports modeleval (the two apps import benchmarks, never
each other): the platform app connects modeleval's selector here when Django starts (`core.apps.CoreConfig.ready`).
"""
from __future__ import annotations

from types import SimpleNamespace

_source = SimpleNamespace()


def connect(*, item_uncertainty) -> None:
    _source.item_uncertainty = item_uncertainty


def item_uncertainty(run_id, item_ids) -> dict:
    """{item id: 0 (sure) to 1} for the items the run has a reading for."""
    return _source.item_uncertainty(run_id, item_ids)
