"""A published study as a preset a researcher picks by name, and every place a run differs from it.

A study names its preset (the run setting `preset`), the modes it scores, the settings it published
per mode and the differences every run of the preset has (what cannot be done here as the study did
it, with why). `differences(mode, settings)` lists both: the standing ones and each published
setting the run changed. Runs carry the list (the runs page, the API) and reports name the preset
beside it. Django-free, so that the web process and the workers read the same list.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Difference:
    setting: str
    published: str
    ours: str
    why: str

    def as_dict(self) -> dict:
        return {"setting": self.setting, "published": self.published, "ours": self.ours, "why": self.why}


@dataclass(frozen=True)
class ByBackend:
    """A published setting whose value the study chose by where the model ran: `local` for checkpoints run here,
    `api` for models behind an API (a run's settings name its `backend`)."""

    local: Any
    api: Any

    def of(self, settings: Mapping) -> Any:
        return self.api if settings.get("backend") == "api" else self.local


# eq=False: a study is its registry's one object, told apart by identity (a key of the reports' layouts).
@dataclass(frozen=True, eq=False)
class Study:
    preset: str  # the value of settings["preset"]
    title: str
    source: str  # paper and code the preset follows
    # mode -> {setting: published value}: a run that changes one is listed as differing there.
    published: Mapping[str, Mapping[str, Any]]
    # mode ("*" for every mode) -> differences every run of the preset has; "mode:key=value" -> those of the runs
    # whose setting `key` is `value`, "mode:key" -> those of the runs where `key` is set (truthy).
    standing: Mapping[str, tuple[Difference, ...]] = field(default_factory=dict)
    # (mode, settings) -> the option order the study scores in (a run field, not a setting), None where it has none.
    positions: Callable[[str, Mapping], str | None] | None = None
    # mode -> what the study prescribes for it, in the shape its mode family asks (studies.recipes).
    recipes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.published)

    def differences(self, mode: str, settings: Mapping, position_policy: str | None = None) -> list[Difference]:
        found = [*self.standing.get("*", ())]
        # A run of dialogues the study released (settings "released") has the differences of reading them, not
        # those of a generation made here.
        if not settings.get("released"):
            found += self.standing.get(mode, ())
        for key, listed in self.standing.items():
            scope, _, condition = key.partition(":")
            name, has_value, value = condition.partition("=")
            if scope == mode and name and (str(settings.get(name)) == value if has_value else settings.get(name)):
                found += listed
        for key, value in self.published.get(mode, {}).items():
            if key not in settings:
                continue
            ours = settings[key]
            if isinstance(value, ByBackend):
                value = value.of(settings)
            if isinstance(value, Mapping) and isinstance(ours, Mapping):
                # Only the parts the study published: {"strategy", "k"} of a few-shot setting.
                ours = {part: ours.get(part) for part in value}
            if ours != value:
                found.append(Difference(key, _shown(value), _shown(ours), "set for this run"))
        published = self.positions(mode, settings) if self.positions and position_policy else None
        if published and position_policy != published:
            found.append(Difference("position policy", published, position_policy, "set for this run"))
        return found


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
