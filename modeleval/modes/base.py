"""What the mode families share: the settings every mode takes, few-shot settings, the template table's
lookup, and how an item's turns and labels read as text."""
from __future__ import annotations

import json
from collections.abc import Mapping

# batch_size None: the scorers' default for the device (1 on CPU, where padding only adds work).
COMMON_DEFAULTS = {"batch_size": None}
NO_FEWSHOT = {"strategy": "none", "k": 0, "fixed_ids": []}


def uses_fewshot(settings: Mapping) -> bool:
    fewshot = settings.get("fewshot") or NO_FEWSHOT
    return fewshot.get("strategy", "none") != "none" and fewshot.get("k", 0) > 0


def lookup_template(templates: Mapping, mode: str, language: str, variant: str) -> tuple[str, str]:
    """(version, text) of a family's default template; English where the language has none."""
    for key in ((mode, language, variant), (mode, "en", variant)):
        if key in templates:
            return templates[key]
    raise ValueError(f"no default template for mode {mode}")


def check_choice(resolved: Mapping, key: str, allowed) -> None:
    if resolved[key] not in allowed:
        raise ValueError(f"{key} must be one of {tuple(allowed)}")


def turn_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) == {"speaker", "text"}:
        return f"{value['speaker']}: {value['text']}"
    return json.dumps(value, ensure_ascii=False)


def label_text(value) -> str:
    """A stored label as a prompt shows it and a prediction stores it: booleans as yes / no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
