"""Which importer a file is written for, read from its first record (for uploads with no format given)."""
from pathlib import Path

import orjson

from .base import ImportFailure

# The keys that tell each JSON-lines format apart, checked in this order.
SIGNATURES = (
    ("jsonl", {"type"}),
    ("dialogbench", {"task", "options", "label"}),
    ("mutual", {"utterances"}),
    ("diqad", {"dialogue", "label"}),
)
PEEK_BYTES = 1 << 20


def guess_format(path, name=None):
    """The format name of an import file; ImportFailure when no importer recognises it."""
    path = Path(path)
    name = name or path.name
    with open(path, "rb") as source:
        head = source.read(PEEK_BYTES)
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if not text:
        raise ImportFailure(name, None, None, "the file is empty; expected at least one record")
    if text.startswith(b"["):
        return "fed"  # the only importer that reads a JSON array
    first = text.split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError as error:
        raise ImportFailure(name, "line 1", None, f"invalid JSON ({error.msg}); cannot tell the format, "
                                                  "choose it in the form") from None
    if isinstance(record, dict):
        for format_name, keys in SIGNATURES:
            if keys <= set(record):
                return format_name
    raise ImportFailure(name, "line 1", None, "no importer recognises this record (expected the keys of "
                        + ", ".join(f"{fmt}: {sorted(keys)}" for fmt, keys in SIGNATURES)
                        + ", or a JSON array for fed); choose the format in the form")
