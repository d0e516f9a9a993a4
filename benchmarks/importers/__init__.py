from . import (dialogbench, dialogbench_paper, dialogbench_released, diqad, diqad_released, fed, jsonl, kodialogbench,
               mutual)
from .detect import detect
from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec

FORMATS = {"dialogbench": dialogbench, "fed": fed, "diqad": diqad, "jsonl": jsonl, "mutual": mutual,
           "dialogbench_paper": dialogbench_paper, "dialogbench_released": dialogbench_released,
           "diqad_released": diqad_released, "kodialogbench": kodialogbench}
EXPORT_FORMATS = {"jsonl": jsonl}

__all__ = ["FORMATS", "detect", "EXPORT_FORMATS", "ImportFailure", "ItemRecord", "ParsedBenchmark", "TaskSpec"]
