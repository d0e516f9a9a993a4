"""Which option a log-likelihood run picks, by rule: the one home of the rules and of their names (no torch
here, so the web process's selectors and the reports read stored options by the same code the scorer picks with)."""
from __future__ import annotations

import math
from collections.abc import Sequence

from studies.vocabulary import Rule


def first_argmax(values: Sequence[float]) -> int:
    # First of equal maxima, as numpy.argmax in lm-eval.
    return max(range(len(values)), key=lambda i: (values[i], -i))


def per_token(logprob: float, n_tokens: int) -> float:
    """Mean log-likelihood per token; an option of no tokens has none, so it ranks below every other
    (never 0, which would beat every option with a likelihood below 1)."""
    return logprob / n_tokens if n_tokens > 0 else -math.inf


def rule_picks(logprobs: Sequence[float], n_tokens: Sequence[int | None], n_chars: Sequence[int]) -> dict[Rule, int]:
    """The option index each rule picks (`Rule`). reports.selectors.AccPick is acc in SQL, held equal to this
    by its test. Options whose token counts are unknown (None: log-likelihoods imported from lm-evaluation-harness,
    whose samples hold none) get no per_token pick."""
    picks = {
        Rule.ACC: first_argmax(logprobs),
        Rule.ACC_NORM: first_argmax([lp / max(c, 1) for lp, c in zip(logprobs, n_chars, strict=True)]),
    }
    if all(t is not None for t in n_tokens):
        picks[Rule.PER_TOKEN] = first_argmax([per_token(lp, t) for lp, t in zip(logprobs, n_tokens, strict=True)])
    return picks
