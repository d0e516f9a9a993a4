"""Next-word probabilities read from a causal checkpoint: the figures `scorers.rating` turns into
ratings and yes/no scores.

A word's probability is summed over its spellings, each the probability of its whole continuation
computed as a log-likelihood continuation (lm-eval's encoding, `scorers.loglikelihood`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .loglikelihood import MCItem, score_shared_context
from .rating import NO_WORDS, SPELLINGS, YES_WORDS, RatingScore, rating_from_probs, yes_no_from_probs


def word_probs(
    model, tokenizer, texts: Sequence[str], words: Sequence[str], *, spellings=SPELLINGS, batch_size: int | None = None
) -> list[dict[str, float]]:
    """For each text, the probability that it continues with each word, summed over
    the word's spellings."""
    options = tuple(s.format(w) for w in words for s in spellings)
    items = [MCItem(text, options, delimiter="") for text in texts]
    probs = []
    for result in score_shared_context(model, tokenizer, items, batch_size=batch_size):
        row = dict.fromkeys(words, 0.0)
        for k, option in enumerate(result.options):
            row[words[k // len(spellings)]] += math.exp(option.logprob)
        probs.append(row)
    return probs


def rating_scores(
    model,
    tokenizer,
    texts: Sequence[str],
    ratings: Sequence[int] = (0, 1, 2, 3, 4),
    *,
    top_k: int = 3,
    batch_size: int | None = None,
) -> list[RatingScore]:
    words = [str(r) for r in ratings]
    probs = word_probs(model, tokenizer, texts, words, batch_size=batch_size)
    return [rating_from_probs({r: row[w] for r, w in zip(ratings, words, strict=True)}, top_k) for row in probs]


def yes_no_scores(model, tokenizer, texts: Sequence[str], *, batch_size: int | None = None) -> list[float]:
    probs = word_probs(model, tokenizer, texts, YES_WORDS + NO_WORDS, batch_size=batch_size)
    return [
        yes_no_from_probs(sum(row[w] for w in YES_WORDS), sum(row[w] for w in NO_WORDS)) for row in probs
    ]
