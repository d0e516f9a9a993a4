"""The studies' published tables as data (studies/<study>/paper.json, read from the papers' text with their
table numbers), and how a model here is matched with a paper's row.

Each file holds the study's `paper`, the text it was read from (`paper_file`) and its `tables`: a `table` number, a
`title`, a `unit` (percent, spearman, tokens), `columns` and `rows` ({model, values: {column: figure}} and, where the
paper groups its rows, `kind`, `group`, `config` or `domain`; a correlation is {value, sd, significant}). The figures
are the papers' own, as printed. JUDGE-BENCH publishes its figures as results files in its repository: they are
kept in its study's folder (studies/judgebench) and served in the same shape, a table per data set.

A model here is one of a paper's rows when the words of one of its names (our name, the endpoint's model name, the
source folder's name) are the words of the row's name or of a name the paper's model goes by elsewhere (SYNONYMS):
"Llama-2-7b-chat-hf" is "LLaMA2-7B-Chat" and "LLaMA2-Chat-7B", "gpt-3.5-turbo-0613" is "ChatGPT".
"""
from __future__ import annotations

import importlib
import json
import re
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Word tokens of a model name: sizes ("7b", "6.7b"), versions ("v1.5"), numbers and words.
_TOKENS = re.compile(r"v\d+(?:\.\d+)*|\d+(?:\.\d+)?[bm](?![a-z])|\d+(?:\.\d+)?|[a-z]+")
# Words that name a release, not a model: Hugging Face's "-hf", a version, a date stamp ("0613").
_NOISE = re.compile(r"^(?:hf|v\d.*|\d{4})$")
# Names a paper's model goes by elsewhere (by the paper's name).
SYNONYMS = {
    "ChatGPT": ("gpt-3.5-turbo",),
    "GPT-3.5": ("gpt-3.5-turbo",),
    "GPT-3.5-Turbo": ("chatgpt",),
    "BLOOM 7B": ("bloom-7b1",),
    "Flan-T5 3B": ("flan-t5-xl",),
}


def words(name) -> frozenset:
    """The words of a model name that tell models apart, lower-cased, release stamps left out."""
    text = str(name or "").lower().rsplit("/", 1)[-1]
    text = re.sub(r"\.gguf$|\.q\d\w*$", "", text)
    return frozenset(t for t in _TOKENS.findall(text) if not _NOISE.match(t))


_SYNONYMS = {words(name): {words(other) for other in others} for name, others in SYNONYMS.items()}


@cache
def study_tables(study: str) -> dict:
    """The study's paper and tables (studies/<study>/paper.json; a study whose figures are its repository's result
    files builds them with its `paper_tables()`)."""
    path = HERE / study / "paper.json"
    if not path.exists():
        return importlib.import_module(f"{__package__}.{study}").paper_tables()
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def matches(row, names) -> bool:
    """Whether a model known by `names` is the paper's `row`."""
    own = words(row["model"])
    known = {own} | _SYNONYMS.get(own, set())
    return any(words(name) in known for name in names if words(name))


def figure(value):
    """A paper figure as a number (a correlation's value), None where the paper prints none."""
    return value["value"] if isinstance(value, dict) else value
