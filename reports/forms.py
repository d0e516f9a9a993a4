"""How a task's form reads for the report: what kind of task it is, which answers are ratings, and
which questions agreement is computed on."""
from __future__ import annotations

from benchmarks.formschema import question
from modeleval.scorers.pairwise import OUTCOMES as PAIRWISE_OUTCOMES
# Question types whose answers agreement and ratings are computed on (text and multi-choice are not).
LABEL_TYPES = {"single_choice", "scale", "boolean", "index"}


def task_kind(form):
    spec = question(form, form["primary"])
    options = spec.get("options")
    if spec["type"] == "single_choice" and options == "item":
        return "multiple_choice"
    values = [str(o["value"]) for o in options] if isinstance(options, list) else []
    if spec["type"] == "single_choice" and values and set(values) <= set(PAIRWISE_OUTCOMES):
        return "pairwise"
    if rating_values(spec) is not None:
        return "rating"
    return "other"


def rating_values(spec):
    """The valid ratings of a question, or None when it is not a rating (scale, yes/no, numeric choice)."""
    if spec["type"] == "scale":
        return list(range(spec["scale"]["min"], spec["scale"]["max"] + 1))
    if spec["type"] == "boolean":
        return [False, True]
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        values = [o["value"] for o in spec["options"] if not o.get("excludes")]
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return values
    return None


def agreement_spec(spec):
    """(categories for Fleiss, Krippendorff level, value domain) of a label question."""
    if spec["type"] == "scale":
        values = list(range(spec["scale"]["min"], spec["scale"]["max"] + 1))
        return values, "ordinal", values
    if spec["type"] == "boolean":
        return [False, True], "nominal", None
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        return [o["value"] for o in spec["options"]], "nominal", None
    return None, "nominal", None

