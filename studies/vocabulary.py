"""The words the studies and the house share, in one place: the rules that pick an option by log-likelihood, the
verdicts of a pairwise judge and how they read as win / tie / lose, yes and no, the decodings a run may ask for.

Scorers compute with these words (modeleval.scorers), reports and pages name them; none spells them again.
"""
from __future__ import annotations

import enum


class Rule(enum.StrEnum):
    """How a log-likelihood run picks its answer among the options (a run's `rule` setting)."""
    ACC = "acc"  # highest summed log-likelihood (lm-eval's acc)
    ACC_NORM = "acc_norm"  # highest log-likelihood per character of the option (lm-eval's acc_norm)
    PER_TOKEN = "per_token"  # highest mean log-likelihood per token (DialogBench's perplexity rule)


# A pairwise verdict: which conversation the judge picks (involves an AI, is better).
ONE, TWO, BOTH, NEITHER = "1", "2", "both", "neither"
WIN, TIE, LOSE = "win", "tie", "lose"
LABELS = (ONE, TWO, BOTH, NEITHER)
# How a verdict is written out: in solved examples, the arena's human form and BotChat's Choice line.
ANSWER_TEXT = {ONE: "Conversation 1", TWO: "Conversation 2", BOTH: "Both", NEITHER: "Neither"}


def outcome(label: str | None, a_position: int, picked_loses: bool = True) -> str | None:
    """The verdict for A, shown at `a_position` (1 or 2). In BotChat the picked
    conversation is the one that looks like an AI, so it loses; for a "which is
    better" judge pass picked_loses=False."""
    if label is None:
        return None
    if label in (BOTH, NEITHER):
        return TIE
    a_picked = label == (ONE if a_position == 1 else TWO)
    return LOSE if a_picked == picked_loses else WIN


# The outcome for the conversation shown first of a pairwise answer: win / tie / lose as such, and a verdict as
# `outcome` reads it where the picked conversation loses (BotChat's "which one involves an AI").
OUTCOMES = {WIN: WIN, TIE: TIE, LOSE: LOSE, **{label: outcome(label, 1) for label in LABELS}}

# A single-dialogue judge's verdict: is any utterance machine-written.
YES, NO = "yes", "no"

# How a generating run decodes: greedy, or the model's own generation config.
DECODINGS = ("greedy", "model_default")
