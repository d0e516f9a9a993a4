"""Which format a file is in, read from the keys of its first record (`import_items` without --format)."""
from pathlib import Path

from .base import ImportFailure, json_array, parse_json, read_text
from .judgebench import is_unified
from .labelstudio import is_export

# (format, test on the first record), the first that holds wins: the more specific shapes first.
RULES = [
    ("judgebench", is_unified),
    ("labelstudio", is_export),
    ("jsonl", lambda r: r.get("type") in ("benchmark", "task", "item")),
    ("fed", lambda r: "context" in r and "annotations" in r),
    ("mutual", lambda r: "utterances" in r),
    ("kodialogbench", lambda r: "answer_idx" in r and "dialogue" in r),
    ("dialogbench_released", lambda r: "prompt_SFT" in r or "prompt_pretrain" in r or "choices" in r),
    ("dialogbench_paper", lambda r: "option" in r or "speaker1 personality" in r or "speaker2 personality" in r),
    ("dialogbench", lambda r: "options" in r),
    ("diqad_released", lambda r: "turns" in r and "label" in r),
    ("diqad", lambda r: "dialogue" in r and "label" in r),
]


def first_record(path):
    """(location, first object) of a JSON array or JSON-lines file."""
    path = Path(path)
    if not path.is_file():
        raise ImportFailure(path, None, None, "no such file")
    with open(path, "rb") as source:
        head = source.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
        source.seek(0)
        if head.startswith(b"{"):
            for number, raw in enumerate(source, start=1):
                if raw.strip():
                    try:
                        return f"line {number}", parse_json(path, raw, f"line {number}")
                    except ImportFailure as line_failure:
                        # Not JSON lines, or a file that is one JSON object written over several lines.
                        try:
                            return "file", parse_json(path, read_text(path))
                        except ImportFailure:
                            raise line_failure from None
    if head.startswith(b"["):
        return "item 0", json_array(path, "records")[0]
    if not head:
        raise ImportFailure(path, None, None, "the file is empty; expected at least one record")
    raise ImportFailure(path, "line 1", None, "expected a JSON array of objects or one JSON object per line")


def detect(path):
    """The format name for the file, or an ImportFailure naming the shapes it could be."""
    location, record = first_record(path)
    if isinstance(record, dict):
        for name, test in RULES:
            if test(record):
                return name
    keys = sorted(record) if isinstance(record, dict) else type(record).__name__
    raise ImportFailure(path, location, "--format", f"cannot tell the format from {keys}; expected one of: "
                        "DialogBench as in its paper (option, label, dialogue), as its released code reads it "
                        "(prompt_SFT, prompt_pretrain, choices, label), our DialogBench shape (task, options, "
                        "label), DiQAD as released (label, reason, turns), our DiQAD shape (dialogue, label), "
                        "FED (context, annotations), a Label Studio export (data, annotations), JUDGE-BENCH "
                        "(dataset, annotations, instances), MuTual (utterances) or our jsonl (type); or name it "
                        "with --format")
