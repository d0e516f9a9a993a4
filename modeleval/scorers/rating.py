"""Huynh et al.: dialogue ratings read from the model's probabilities of the rating
tokens after the prompt, with few-shot prompts whose examples are chosen at random,
from a fixed list, or by BM25.

Rating: the probabilities of the valid ratings; the top 3 are renormalised and the
expected rating is sum p_i * r_i. Yes/no: g = p(yes) / (p(yes) + p(no)).

A word's probability is summed over its spellings ("3" and " 3"; "yes", " yes",
"Yes", ...), each the probability of its whole continuation, computed as a
log-likelihood continuation (lm-eval's encoding). Where a spelling is one token this
is the next-token probability; where a tokenizer splits " 3" into " " and "3" (as
SmolLM2's does), the shared " " factor cancels in the renormalisation. The probabilities
themselves are read from a model by `scorers.next_word`; this module is torch-free.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import prompts

SPELLINGS = ("{}", " {}")
YES_WORDS = ("yes", "Yes", "YES")
NO_WORDS = ("no", "No", "NO")


@dataclass(frozen=True)
class RatingScore:
    expected: float
    top: dict[float, float]  # the top-k ratings, renormalised
    raw: dict[float, float]  # every valid rating's probability


def rating_from_probs(raw: Mapping[float, float], top_k: int = 3) -> RatingScore:
    # Ties go to the lower rating, so the choice does not depend on dict order.
    top = sorted(raw.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
    total = sum(p for _, p in top)
    if total <= 0:
        raise ValueError("no probability on any rating")
    renormalised = {rating: p / total for rating, p in top}
    expected = sum(rating * p for rating, p in renormalised.items())
    return RatingScore(expected, renormalised, dict(raw))


def yes_no_from_probs(p_yes: float, p_no: float) -> float:
    if p_yes + p_no <= 0:
        raise ValueError("no probability on yes or no")
    return p_yes / (p_yes + p_no)


# --- few-shot examples -------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    id: str
    context: str  # the dialogue, rendered
    response: str
    answer: str = ""  # what a shot shows as its label: "3", "yes"


STRATEGIES = ("none", "random", "fixed", "bm25_context", "bm25_response", "bm25_both")


def _words(text: str) -> list[str]:
    # Chinese has no spaces: one character per term; other scripts by word.
    return re.findall(r"[\u3400-\u9fff]|[^\W_\u3400-\u9fff]+", text.lower())


class FewShotSelector:
    """Chooses k examples from a pool for a test item, never the item itself (matched
    by id). Random choice is seeded per (seed, item id), so it does not depend on
    the order in which items are scored."""

    def __init__(
        self,
        pool: Sequence[Example],
        strategy: str = "none",
        k: int = 0,
        *,
        seed: int = 0,
        fixed_ids: Sequence[str] = (),
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}")
        by_id = {e.id: e for e in pool}
        if unknown := [i for i in fixed_ids if i not in by_id]:
            raise ValueError(f"fixed example ids not in the pool: {unknown}")
        self.pool, self.strategy, self.k, self.seed = list(pool), strategy, k, seed
        self.fixed = [by_id[i] for i in fixed_ids]
        bm25 = strategy.startswith("bm25")
        self._terms = [(_words(e.context), _words(e.response)) for e in self.pool] if bm25 else []

    def _bm25_terms(self, context: list[str], response: list[str]) -> list[str]:
        return {"bm25_context": context, "bm25_response": response, "bm25_both": context + response}[
            self.strategy
        ]

    def select(self, query: Example) -> list[Example]:
        if self.strategy == "none" or self.k <= 0:
            return []
        if self.strategy == "fixed":
            return [e for e in self.fixed if e.id != query.id][: self.k]
        candidates = [i for i, e in enumerate(self.pool) if e.id != query.id]
        if self.strategy == "random":
            rng = random.Random(f"{self.seed}:{query.id}")
            return [self.pool[i] for i in rng.sample(candidates, min(self.k, len(candidates)))]
        from rank_bm25 import BM25Okapi

        docs = [self._bm25_terms(*self._terms[i]) for i in candidates]
        if not any(docs):  # BM25 is undefined on an empty corpus: keep pool order
            return [self.pool[i] for i in candidates[: self.k]]
        # Built without the test item, so its words weigh nothing in the statistics.
        scores = BM25Okapi(docs).get_scores(self._bm25_terms(_words(query.context), _words(query.response)))
        ranked = sorted(range(len(candidates)), key=lambda j: (-scores[j], j))
        return [self.pool[candidates[j]] for j in ranked[: self.k]]


@dataclass(frozen=True)
class FewShotPrompt:
    text: str
    example_ids: tuple[str, ...]

    @property
    def asked(self) -> str:
        """What the model is asked: the text as one user message (`diqad.ChatPrompt` asks a chat)."""
        return self.text


def build_prompt(
    query: Example,
    shots: Sequence[Example],
    *,
    instruction: str,
    shot_template: str = prompts.RATING_SHOT,
    separator: str = prompts.SHOT_SEPARATOR,
    **fields: str,
) -> FewShotPrompt:
    """instruction, the shots with their answers, then the query with an empty answer.
    `fields` fill the rest of the template (e.g. quality="engaging")."""
    if any(s.id == query.id for s in shots):
        raise ValueError(f"the test item {query.id!r} is among its own examples")

    def shot(e: Example, answer: str) -> str:
        return shot_template.format(context=e.context, response=e.response, answer=answer, **fields)

    blocks = [instruction] + [shot(s, " " + s.answer) for s in shots] + [shot(query, "")]
    return FewShotPrompt(separator.join(blocks), tuple(s.id for s in shots))
