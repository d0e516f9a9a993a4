"""Which option a log-likelihood run picks, by rule: the one home of the rules (no torch here, so the web
process's selectors read stored options by the same code the scorer picks with)."""
from __future__ import annotations

from typing import Sequence


def first_argmax(values: Sequence[float]) -> int:
    # First of equal maxima, as numpy.argmax in lm-eval.
    return max(range(len(values)), key=lambda i: (values[i], -i))


def rule_picks(logprobs: Sequence[float], n_tokens: Sequence[int], n_chars: Sequence[int]) -> dict[str, int]:
    """The option index each rule picks: acc (highest summed log-likelihood), acc_norm (per character of the
    option, lm-eval) and per_token (highest mean log-likelihood per token: DialogBench's perplexity rule).
    reports.selectors.AccPick is acc in SQL, held equal to this by its test."""
    return {
        "acc": first_argmax(logprobs),
        "acc_norm": first_argmax([lp / max(c, 1) for lp, c in zip(logprobs, n_chars)]),
        "per_token": first_argmax([lp / t for lp, t in zip(logprobs, n_tokens)]),
    }
