from . import dialogbench, diqad, fed, jsonl, mutual
from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec

FORMATS = {"dialogbench": dialogbench, "fed": fed, "diqad": diqad, "jsonl": jsonl, "mutual": mutual}
EXPORT_FORMATS = {"jsonl": jsonl}

__all__ = ["FORMATS", "EXPORT_FORMATS", "ImportFailure", "ItemRecord", "ParsedBenchmark", "TaskSpec"]
