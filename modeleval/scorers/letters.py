"""Reading an option letter out of a generated reply.

DialogBench scores chat models by the letter they answer; a reply with no letter
that can be read is wrong, and how many there were is reported. Torch-free, so the
run's rules and the report read it without loading a model.
"""

from __future__ import annotations

import re
from functools import lru_cache

_OPEN, _CLOSE = r"[(\[（【]", r"[)\]）】]"
_VERBS = "is|was|seems|looks|would|should|could|might|must|fits|matches|has"
_ARTICLE = re.compile(rf"(?<![A-Za-z])[AI](?= +(?!(?:{_VERBS})\b)[a-z])")


@lru_cache(maxsize=32)
def _patterns(letters: str, language: str):
    L = f"([{re.escape(letters)}])"
    end = r"(?![A-Za-z])"
    if language == "zh":
        explicit = [
            rf"(?:答案|选项)\s*(?:应该|应)?\s*(?:是|为|选)?\s*[:：]?\s*{_OPEN}?\s*{L}{end}",
            rf"(?:选择|选)\s*{_OPEN}?\s*{L}{end}",
        ]
    elif language == "en":
        # The letter itself must be upper case: "answer is a ..." is an article.
        explicit = [
            rf"(?i:answer)(?:\s+(?i:is|would\s+be|should\s+be))?\s*[:：]?\s*(?i:option\s*)?{_OPEN}?\s*{L}{end}",
            rf"(?i:option|choice|choose|pick|select)(?:\s+(?i:is))?\s*[:：]?\s*{_OPEN}?\s*{L}{end}",
        ]
    else:
        raise ValueError(f"language must be 'en' or 'zh', not {language!r}")
    parenthesised = re.compile(rf"{_OPEN}\s*{L}\s*{_CLOSE}")
    line_label = re.compile(rf"^[\s*#>]*{L}\s*[.)．:：、]", re.MULTILINE)
    standalone = re.compile(rf"(?<![A-Za-z]){L}{end}")
    return [re.compile(p) for p in explicit], parenthesised, line_label, standalone


def _only(found: list[str]) -> str | None:
    return found[0] if found and len(set(found)) == 1 else None


def extract_option_letter(text: str, letters: str = "ABCD", language: str = "en") -> str | None:
    """The option letter a reply gives, or None when none can be read or the reply
    points at several (e.g. it lists the options back).

    In order: an explicit statement ("Answer: B", "The answer is (B)", "答案是B",
    "选B"; the last one wins, as a reply may reason before concluding); "(B)"; an
    option label at a line start ("B." "B)" "B、"); the bare letter; a single
    stand-alone letter anywhere.
    """
    explicit, parenthesised, line_label, standalone = _patterns(letters, language)
    for pattern in explicit:
        found = pattern.findall(text)
        if found:
            return found[-1]
    for pattern in (parenthesised, line_label):
        if found := pattern.findall(text):
            return _only(found)
    bare = re.sub(r"[\s*.。:：()（）\[\]]", "", text)
    if len(bare) == 1 and bare in letters:
        return bare
    words = set()
    if language == "en":
        # "A" and "I" before a lower-case word are English words ("A person", "I
        # think"), unless that word is a verb with the letter as subject ("A is").
        words = {m.start() for m in _ARTICLE.finditer(text)}
    alone = [m.group(1) for m in standalone.finditer(text) if m.start(1) not in words]
    return _only(alone)
