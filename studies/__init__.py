"""The published studies the platform reproduces, one folder each, and the registry everything else asks.

Pure Python: no Django, no torch, nothing else of ours (tests/studies/test_layout.py). A study's folder holds what
the study prescribes: its recipes per mode (settings, prompts per language, how a reply is read, the options'
order), its differences from the paper with their reasons (`STUDY`), its paper's tables (`paper.json`). The words
the studies share are `studies.vocabulary`'s.

The mode families (modeleval.modes), the importers, the report sections and the pages ask `get(preset)`,
`study_of(settings)` or iterate `each()`; none compares a preset. A new study is a new folder and one line below.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from . import botchat, dialogbench, diqad, huynh, judgebench, kodialogbench
from .study import ByBackend, Difference, Study

__all__ = ["ByBackend", "Difference", "Study", "STUDIES", "each", "get", "study_of", "recipe", "offering", "protocol",
           "presets_for"]

# The registry: one line per study, in the order the reports show them.
STUDIES: dict[str, Study] = {study.preset: study for study in (
    dialogbench.STUDY,
    botchat.STUDY,
    diqad.STUDY,
    kodialogbench.STUDY,
    huynh.STUDY,
    judgebench.STUDY,
)}


def each() -> Iterator[Study]:
    return iter(STUDIES.values())


def get(preset: str | None) -> Study | None:
    """The study whose preset is `preset`; None for "" (no study) and for a name no study has."""
    return STUDIES.get(preset or "")


def study_of(settings: Mapping | None) -> Study | None:
    return get((settings or {}).get("preset"))


def recipe(settings: Mapping | None, mode: str):
    """What the run's study prescribes for `mode` (studies.recipes); None for a run of no study."""
    study = study_of(settings)
    return study.recipes.get(mode) if study else None


def offering(modes) -> tuple[str, ...]:
    """The presets of the studies with a recipe for one of `modes`, in the registry's order."""
    return tuple(s.preset for s in each() if any(mode in s.recipes for mode in modes))


def protocol(mode: str, settings: Mapping | None, position_policy: str | None = None) -> dict | None:
    """What a run or report shows of its study: the preset, its source and the differences (the run's option order
    among them where the study has one); None for a run of no study."""
    study = study_of(settings)
    if study is None:
        return None
    return {"preset": study.preset, "title": study.title, "source": study.source,
            "differences": [d.as_dict() for d in study.differences(mode, settings or {}, position_policy)]}


def presets_for(mode: str) -> list[dict]:
    """The studies a run of `mode` can follow, for the runs page."""
    return [{"preset": s.preset, "title": s.title} for s in each() if mode in s.modes]
