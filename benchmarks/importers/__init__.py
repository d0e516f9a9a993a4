from . import (
    dialogbench,
    dialogbench_paper,
    dialogbench_released,
    diqad,
    diqad_released,
    fed,
    jsonl,
    judgebench,
    kodialogbench,
    labelstudio,
    mutual,
)
from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec
from .detect import detect

FORMATS = {"dialogbench": dialogbench, "fed": fed, "diqad": diqad, "jsonl": jsonl, "mutual": mutual,
           "dialogbench_paper": dialogbench_paper, "dialogbench_released": dialogbench_released,
           "diqad_released": diqad_released, "kodialogbench": kodialogbench, "judgebench": judgebench,
           "labelstudio": labelstudio}
EXPORT_FORMATS = {"jsonl": jsonl}


def format_shapes() -> list[tuple[str, list[str]]]:
    """(format, its shape cut at backticks: odd parts are code) for every import format, in the order the upload
    page's menu offers them: the page's table of formats and its menu are read from FORMATS alike."""
    return [(name, FORMATS[name].FORMAT_SHAPE.split("`")) for name in sorted(FORMATS)]

__all__ = ["FORMATS", "format_shapes", "detect", "EXPORT_FORMATS", "ImportFailure", "ItemRecord", "ParsedBenchmark",
           "TaskSpec"]
