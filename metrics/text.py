"""Lengths of text in words, for every script the studies use.

Chinese and Japanese are written without spaces between words, so splitting on spaces makes a whole
Chinese utterance one word. Here each Chinese character (Han ideograph) and each kana counts as one word,
as Chinese word-count conventions do (字数); every other run of text between spaces counts as one word.
Korean is written with spaces between its words (eojeol), so a Korean word is the run between spaces, as in
English. One rule, used wherever the platform counts words."""
from __future__ import annotations

import re
from collections.abc import Iterable

# Han ideographs (with extensions and compatibility forms), kana and CJK punctuation: written unspaced.
_UNSPACED = (r"\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
             r"\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f")
_UNSPACED_CHAR = re.compile(f"[{_UNSPACED}]")
_CJK_PUNCTUATION = re.compile(r"[\u3000-\u3004\u3008-\u3020\u30fb\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")

WORD_RULE = ("words: each Chinese character or kana counts as one word (those scripts are written without "
             "spaces); any other text, Korean included (written with spaces between words), counts its runs "
             "between spaces")


def word_count(text: str) -> int:
    """Words in `text`: each Han character or kana is one word, each other run between spaces (punctuation
    alone excepted) is one."""
    count = len(_UNSPACED_CHAR.findall(text))
    rest = _CJK_PUNCTUATION.sub(" ", _UNSPACED_CHAR.sub(" ", text))
    return count + sum(1 for run in rest.split() if any(ch.isalnum() for ch in run))


def has_unspaced_script(text: str) -> bool:
    return bool(_UNSPACED_CHAR.search(text))


def scripts_counted(texts: Iterable[str]) -> str:
    """How `word_count` counted these texts, for a report to say: "spaces" (no Chinese or Japanese),
    "characters" (Chinese or Japanese only) or "characters and spaces" (both)."""
    unspaced = spaced = False
    for text in texts:
        unspaced = unspaced or has_unspaced_script(text)
        spaced = spaced or any(ch.isalnum() for ch in _UNSPACED_CHAR.sub("", text))
    return "characters and spaces" if unspaced and spaced else "characters" if unspaced else "spaces"
