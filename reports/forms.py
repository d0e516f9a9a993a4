"""How a task's form reads for the report: what kind of task it is, which answers are ratings, and
which questions agreement is computed on."""
from __future__ import annotations

from benchmarks.formschema import BOOLEAN_VALUES, option_values, question, rating_values, scale_values
from studies.vocabulary import OUTCOMES as PAIRWISE_OUTCOMES

# Question types whose answers agreement and ratings are computed on (text and multi-choice are not).
LABEL_TYPES = {"single_choice", "scale", "boolean", "index"}


def task_kind(form):
    spec = question(form, form["primary"])
    options = spec.get("options")
    if spec["type"] == "single_choice" and options == "item":
        return "multiple_choice"
    values = [str(v) for v in option_values(spec)] if isinstance(options, list) else []
    if spec["type"] == "single_choice" and values and set(values) <= set(PAIRWISE_OUTCOMES):
        return "pairwise"
    if rating_values(spec) is not None:
        return "rating"
    return "other"


def agreement_spec(spec):
    """(categories for Fleiss, Krippendorff level, value domain) of a label question."""
    if spec["type"] == "scale":
        values = scale_values(spec)
        return values, "ordinal", values
    if spec["type"] == "boolean":
        return list(BOOLEAN_VALUES), "nominal", None
    if spec["type"] == "single_choice" and isinstance(spec.get("options"), list):
        return option_values(spec), "nominal", None
    return None, "nominal", None

