"""FED (Mehri and Eskenazi, 2020): a JSON array of 500 items, turn level (with `response`) and dialog level.

Two tasks, one scale question per quality with Overall as primary; the scale of each quality is
read from the ratings in the file. Ratings themselves are imported as annotations by
`import_ratings`; text ratings such as "N/A (...)" are missing values there, never 0.
"""
import json
import re

from .base import ImportFailure, ItemRecord, ParsedBenchmark, TaskSpec, json_array, parse_speaker_lines

# The upload page's table of formats (`code` in backticks).
FORMAT_SHAPE = ('the FED file (a JSON array): tasks `fed-turn` and `fed-dialog`; ratings come in with '
         '`import_ratings`.')

TURN_QUALITIES = ["Interesting", "Engaging", "Specific", "Relevant", "Correct", "Semantically appropriate",
                  "Understandable", "Fluent", "Overall"]
DIALOG_QUALITIES = ["Coherent", "Error recovery", "Consistent", "Diverse", "Depth", "Likeable", "Understanding",
                    "Flexible", "Informative", "Inquisitive", "Overall"]
LEVELS = {"turn": ("fed-turn", "FED turn level", TURN_QUALITIES),
          "dialog": ("fed-dialog", "FED dialog level", DIALOG_QUALITIES)}


def quality_key(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def external_id(index):
    return f"fed-{index:03d}"


def load_records(path):
    data = json_array(path, "FED items")
    for index, record in enumerate(data):
        where = f"item {index}"
        if not isinstance(record, dict):
            raise ImportFailure(path, where, None, "expected an object")
        if not isinstance(record.get("context"), str) or not record["context"].strip():
            raise ImportFailure(path, where, "context", "expected the dialogue as 'User: ...' / 'System: ...' lines")
        if "response" in record and not isinstance(record["response"], str):
            raise ImportFailure(path, where, "response", "expected a string")
        annotations = record.get("annotations")
        if not isinstance(annotations, dict) or not annotations:
            raise ImportFailure(path, where, "annotations", "expected an object of quality -> list of ratings")
        qualities = TURN_QUALITIES if "response" in record else DIALOG_QUALITIES
        for quality in qualities:
            ratings = annotations.get(quality)
            if not isinstance(ratings, list) or not ratings:
                raise ImportFailure(path, where, f"annotations.{quality}", "expected a non-empty list of ratings")
            for r_index, rating in enumerate(ratings):
                if isinstance(rating, bool) or not isinstance(rating, (int, str)):
                    raise ImportFailure(path, where, f"annotations.{quality}[{r_index}]",
                                        f"expected an integer rating or a text note, got {json.dumps(rating)}")
        unknown = set(annotations) - set(qualities)
        if unknown:
            raise ImportFailure(path, where, "annotations", f"unknown qualities {sorted(unknown)}; expected "
                                                            f"{qualities}")
    return data


def numeric_rating(value):
    """A FED rating as a number, or None for text such as 'N/A (no errors)'."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def scale_form(records, qualities):
    questions = []
    for quality in qualities:
        values = [numeric_rating(r) for rec in records for r in rec["annotations"][quality]]
        values = [v for v in values if v is not None]
        low, high = (min(values), max(values)) if values else (0, 2)
        questions.append({"key": quality_key(quality), "type": "scale", "label": quality,
                          "scale": {"min": low, "max": max(high, low + 1)}})
    return {"primary": "overall", "questions": questions}


def parse(path):
    records = load_records(path)
    by_level = {"turn": [], "dialog": []}
    items = []
    for index, record in enumerate(records):
        level = "turn" if "response" in record else "dialog"
        by_level[level].append(record)
        where = f"item {index}"
        context_lines = [line for line in record["context"].split("\n") if line.strip()]
        turns = parse_speaker_lines(path, where, context_lines, "context")
        fields = {}
        if level == "turn":
            speaker, _, text = record["response"].partition(":")
            fields = {"response": {"speaker": speaker.strip(), "text": text.strip()} if text
                      else {"speaker": "System", "text": record["response"]}}
        meta = {"system": record.get("system", ""), "level": level, "source_index": index, "language": "en"}
        items.append(ItemRecord(LEVELS[level][0], external_id(index), turns, fields, meta, None, where))
    tasks = [TaskSpec(LEVELS[level][0], LEVELS[level][1], scale_form(by_level[level], LEVELS[level][2]), "quality")
             for level in ("turn", "dialog") if by_level[level]]
    header = {"name": "FED", "language": "en", "source": "Mehri and Eskenazi (2020), FED data",
              "licence": "research use"}
    return ParsedBenchmark(path, header, tasks, items)
