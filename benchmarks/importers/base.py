"""What every importer produces, and the refusal that names file, line and field."""
import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from django.conf import settings

from core.errors import ActionError, Code
from core.nesting import MAX_DEPTH, deeper_than

# A single item bigger than this is almost certainly a broken file, not a dialogue.
MAX_RECORD_BYTES = getattr(settings, "HB_IMPORT_MAX_RECORD_BYTES", 5 * 1024 * 1024)


class ImportFailure(ActionError):
    """A malformed input. The message says where (file, line or item index, field) and what was expected."""

    def __init__(self, path, location, field_name, expected):
        self.path, self.location, self.field, self.expected = str(path), location, field_name, expected
        where = f"{self.path}:{location}" if location is not None else self.path
        what = f" field '{field_name}':" if field_name else ""
        super().__init__(Code.INVALID_FILE, f"{where}:{what} {expected}")


@dataclass
class TaskSpec:
    slug: str
    name: str
    form: dict
    dimension: str = ""
    instructions: str = ""
    source_names: tuple = ()  # the source data's names of the task where they differ from `name`


@dataclass
class ItemRecord:
    task: str
    external_id: str
    dialogue: list
    fields: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    source_gold: dict | None = None
    location: str = ""  # "line 12" or "item 12", for error messages


@dataclass
class ParsedBenchmark:
    path: Path
    header: dict
    tasks: list
    items: list


def read_text(path):
    """The whole file as UTF-8 text; refuse empty files and other encodings with the byte's line."""
    path = Path(path)
    if not path.is_file():
        raise ImportFailure(path, None, None, "no such file")
    raw = path.read_bytes()
    if not raw.strip():
        raise ImportFailure(path, None, None, "the file is empty; expected at least one record")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ImportFailure(path, f"line {line}", None, f"bytes that are not UTF-8 at offset {error.start}; save the "
                                                        "file as UTF-8") from None


def json_lines(path):
    """Yield (line number, object) for each non-blank line of a JSON-lines file, reading as it goes."""
    path = Path(path)
    if not path.is_file():
        raise ImportFailure(path, None, None, "no such file")
    seen_any = False
    with open(path, "rb") as source:
        for number, raw in enumerate(source, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            seen_any = True
            if len(raw) > MAX_RECORD_BYTES:
                raise ImportFailure(path, f"line {number}", None, f"a record of {len(raw):,} bytes, over the limit of "
                                                                  f"{MAX_RECORD_BYTES:,}")
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ImportFailure(path, f"line {number}", None,
                                    f"bytes that are not UTF-8 at column {error.start + 1}; save the file as "
                                    "UTF-8") from None
            nul = raw.find(b"\x00")
            if nul >= 0:
                raise ImportFailure(path, f"line {number}", None, f"binary data (a NUL byte at column {nul + 1}); "
                                                                  "expected UTF-8 JSON text")
            record = parse_json(path, raw, f"line {number}")
            if not isinstance(record, dict):
                raise ImportFailure(path, f"line {number}", None, "expected a JSON object, got "
                                                                  f"{type(record).__name__}")
            yield number, record
    if not seen_any:
        raise ImportFailure(path, None, None, "the file is empty; expected at least one record")


def require(path, location, record, key, kind, *, optional=False, default=None):
    """record[key] checked against a type (or tuple of types); names the field when it is wrong."""
    if key not in record or record[key] is None:
        if optional:
            return default
        raise ImportFailure(path, location, key, "missing; it is required")
    value = record[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ImportFailure(path, location, key, f"expected {_kind_name(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise ImportFailure(path, location, key, f"expected {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind):
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object",
             bool: "true or false"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def check_turns(path, location, turns, key="dialogue"):
    """Turns as [{speaker, text}], non-empty strings."""
    if not isinstance(turns, list) or not turns:
        raise ImportFailure(path, location, key, "expected a non-empty list of {speaker, text} turns")
    for index, turn in enumerate(turns):
        if (not isinstance(turn, dict) or not isinstance(turn.get("speaker"), str)
                or not isinstance(turn.get("text"), str)):
            raise ImportFailure(path, location, f"{key}[{index}]", "expected {\"speaker\": string, \"text\": string}")
        if len(turn) != 2:
            raise ImportFailure(path, location, f"{key}[{index}]", "unexpected keys "
                                                                   f"{sorted(set(turn) - {'speaker', 'text'})}; a turn "
                                                                   "has only speaker and text")
    return turns


def parse_speaker_lines(path, location, lines, key="dialogue"):
    """Turns written as "Speaker: text" strings, as DialogBench and FED write them."""
    turns = []
    for index, line in enumerate(lines):
        if not isinstance(line, str):
            raise ImportFailure(path, location, f"{key}[{index}]", "expected a string \"speaker: text\"")
        speaker, sep, text = line.partition(":")
        if not sep or not speaker.strip() or len(speaker) > 60:
            raise ImportFailure(path, location, f"{key}[{index}]", f"expected \"speaker: text\", got {line[:60]!r}")
        turns.append({"speaker": speaker.strip(), "text": text.strip()})
    if not turns:
        raise ImportFailure(path, location, key, "expected at least one turn")
    return turns


TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"


def parse_json(path, text, location=None):
    """One JSON document (a file, or a line of one), refused with its line like any other bad JSON when it does not
    parse or nests deeper than MAX_DEPTH (the parser stops at 1,024 levels without recursing; deeper than 64 is
    refused as well, since every later step walks the value recursively). `location` names a line of the file."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        if "depth" in error.msg:
            where = location or f"line {error.lineno}"
            raise ImportFailure(path, where, None, f"{TOO_DEEP} (at column {error.colno})") from None
        end_line, message = _json_error(text, error, location)
        raise ImportFailure(path, location or f"line {end_line or error.lineno}", None, message) from None
    if deeper_than(value):
        raise ImportFailure(path, location or _deep_line(text), None, TOO_DEEP)
    return value


def _json_error(text, error, location):
    """(the line a record that ends too soon ends on, else None; what is wrong with the JSON, and where). A record
    that ends before it is complete (a truncated file or line) is reported at its end, the line and column of its
    last character (the parser's own place is the start of the line after it); anything else at the parser's
    column. A message that ends with its own "at" ("Unterminated string starting at") is given the column
    without a second "at"."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", errors="replace")
    message = re.sub(r"\s*:$", "", error.msg.strip())
    placed = f"{message} column {error.colno}" if re.search(r"\bat$", message) else f"{message} at column {error.colno}"
    ended = text.rstrip()
    if error.pos >= len(ended):
        first = int(location.split()[-1]) if location and location.split()[-1].isdigit() else 1
        line, column = first + ended.count("\n"), len(ended) - (ended.rfind("\n") + 1)
        said = placed if re.search(r"\bat$", message) else message
        return line, (f"invalid JSON: the record ends at line {line}, column {column}, before it is complete "
                      f"({said}); was the file cut short?")
    return None, f"invalid JSON ({placed})"


def _deep_line(text):
    """The line where nesting first goes deeper than MAX_DEPTH (brackets outside strings counted)."""
    depth, line, in_string, escaped = 0, 1, False, False
    for char in text:
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                break
        elif char in "]}":
            depth -= 1
        line += char == "\n"
    return f"line {line}"


def json_array(path, what):
    """The file as a non-empty JSON array (of `what`, for the error when it is not one)."""
    data = parse_json(path, read_text(path))
    if not isinstance(data, list) or not data:
        raise ImportFailure(path, None, None, f"expected a non-empty JSON array of {what}")
    return data


def record_id(path, where, record):
    """The record's `id`, else one made of the file's name and the record's line or index."""
    external_id = require(path, where, record, "id", (str, int), optional=True, default=None)
    return str(external_id) if external_id is not None else f"{Path(path).stem}-{where.split()[-1]}"


def json_records(path, shape):
    """Yield (location, object) from a JSON array ("item N") or a JSON-lines file ("line N"); `shape`
    names what each object should be, for the error when the file is neither."""
    path = Path(path)
    if not path.is_file():
        raise ImportFailure(path, None, None, "no such file")
    with open(path, "rb") as source:
        head = source.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"["):
        for index, record in enumerate(json_array(path, shape)):
            if not isinstance(record, dict):
                raise ImportFailure(path, f"item {index}", None, f"expected {shape}, got {type(record).__name__}")
            yield f"item {index}", record
    elif head.startswith(b"{") or not head:
        for number, record in json_lines(path):
            yield f"line {number}", record
    else:
        raise ImportFailure(path, "line 1", None, f"expected {shape}: a JSON array of objects, or one JSON object per "
                                                  "line")


# Scripts by the letters they hold, for `language_of_text`: Han ideographs (CJK unified, extension A and the
# compatibility block), Hangul syllables and jamo, Latin letters (ASCII and Latin-1 to Latin Extended-B).
SCRIPTS = {
    "zh": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "ko": re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
    "en": re.compile(r"[A-Za-z\u00c0-\u024f]"),
}
KANA = re.compile(r"[\u3040-\u30ff]")  # Japanese writes Han characters with kana


HAN_WEIGHT = 4


def language_of_text(text, default="en"):
    """The language an item's text is written in, by its script (the one rule of every importer): Hangul is
    Korean (Korean text may hold Han characters too), kana Japanese, else Han (Chinese) or Latin (English), whichever
    holds more of the text, a Han character counting as a short word of Latin letters (HAN_WEIGHT); `default` for
    text with no letter of these."""
    text = text or ""
    counts = {language: len(pattern.findall(text)) for language, pattern in SCRIPTS.items()}
    if counts["ko"]:
        return "ko"
    if KANA.search(text):
        return "ja"
    if not counts["zh"] and not counts["en"]:
        return default
    return "zh" if HAN_WEIGHT * counts["zh"] >= counts["en"] else "en"
