"""How the studies and the house lay a dialogue out as text: a turn per line, a chat as its messages, a prompt's
hash (a run stores the template text and its hash, so a figure can always be traced to the exact prompt)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence


def template_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render_dialogue(turns: Iterable[Mapping[str, str]], speakers: Mapping[str, str] | None = None) -> str:
    """One "Speaker: text" line per turn; `speakers` renames speakers (e.g. to hide
    which side is a bot)."""
    speakers = speakers or {}
    return "\n".join(f"{speakers.get(t['speaker'], t['speaker'])}: {t['text']}" for t in turns)


def chat_messages(prompt: str | Sequence[tuple[str, str]]) -> list[dict]:
    """A prompt as chat messages: a text is one user message; a chat is its (role, content) pairs, in order."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [{"role": role, "content": content} for role, content in prompt]


def prompt_text(prompt: str | Sequence[tuple[str, str]]) -> str:
    """How a prediction shows a prompt: a text as it is, a chat as its messages in JSON."""
    return prompt if isinstance(prompt, str) else json.dumps(chat_messages(prompt), ensure_ascii=False)
