"""Turning several people's answers into one: majority vote, expert panels, rater means."""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Any, Iterable, Literal, Mapping, Sequence

import numpy as np

from ._common import Result, is_missing, is_number, plain, present

TieRule = Literal["none", "first", "lowest", "random"]
TIE_RULES = {
    "none": "a tie gives no label",
    "first": "a tie goes to the tied label given first",
    "lowest": "a tie goes to the lowest tied label",
    "random": "a tie goes to a tied label drawn at random (seeded)",
}


@dataclass(frozen=True)
class MajorityVote(Result):
    label: Any  # None when there are no votes, or on a tie under tie_rule "none"
    votes: dict  # label -> count, most votes first
    margin: int  # top count minus runner-up count (0 on a tie)
    is_tie: bool
    tie_rule: str
    tie_rule_text: str
    n_votes: int


def majority_vote(labels: Sequence[Any], tie_rule: TieRule = "none", seed: int | None = None) -> MajorityVote:
    """Most frequent label among the non-missing ones, with the tie rule stated."""
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {sorted(TIE_RULES)}")
    votes = Counter(plain(v) for v in present(labels))
    ranked = votes.most_common()  # stable: equal counts keep the order first given
    if not ranked:
        return MajorityVote(None, {}, 0, False, tie_rule, TIE_RULES[tie_rule], 0)
    top = ranked[0][1]
    tied = [label for label, count in ranked if count == top]
    runner_up = next((count for _, count in ranked if count < top), 0)
    is_tie = len(tied) > 1
    if not is_tie:
        label = tied[0]
    elif tie_rule == "none":
        label = None
    elif tie_rule == "first":
        label = tied[0]
    elif tie_rule == "lowest":
        label = min(tied)
    else:
        label = tied[np.random.default_rng(seed).integers(len(tied))]
    return MajorityVote(label, dict(ranked), 0 if is_tie else top - runner_up, is_tie,
                        tie_rule, TIE_RULES[tie_rule], sum(votes.values()))


_PLAIN_LABELS = {str, int, bool, type(None)}


def _plain_labels(answers: Sequence[Sequence[Any]]) -> bool:
    """True when every answer is a label as read from JSON (text, a whole number, yes/no) or None."""
    return set(map(type, chain.from_iterable(answers))) <= _PLAIN_LABELS


@dataclass(frozen=True)
class PanelAccuracy(Result):
    accuracy: float | None
    n_correct: int
    n_items: int
    m: int
    item_correct: list  # per item: at least m panel answers equal the gold label
    rule: str


def m_of_k_correct(answers: Sequence[Sequence[Any]], gold: Sequence[Any], m: int) -> PanelAccuracy:
    """Panel accuracy where an item is correct when at least `m` panel answers match gold.

    DialogBench: 3 experts, m=2. A missing answer counts as not matching.
    """
    if len(answers) != len(gold):
        raise ValueError(f"answers and gold differ in length ({len(answers)} != {len(gold)})")
    if m < 1:
        raise ValueError("m must be at least 1")
    if _plain_labels(answers):  # None is the only missing value: no per-answer check
        flags = [sum(1 for a in item if a is not None and a == g) >= m for item, g in zip(answers, gold)]
    else:
        flags = [sum(1 for a in item if not is_missing(a) and a == g) >= m for item, g in zip(answers, gold)]
    n = len(flags)
    return PanelAccuracy(sum(flags) / n if n else None, sum(flags), n, m, flags,
                         f"an item is correct when at least {m} answers match gold; missing answers do not match")


@dataclass(frozen=True)
class RaterAccuracy(Result):
    rater: Any
    accuracy: float | None
    n_correct: int
    n_answered: int


@dataclass(frozen=True)
class MeanOfRaters(Result):
    accuracy: float | None  # unweighted mean of the raters' accuracies
    std: float | None  # population std of the raters' accuracies
    raters: list
    missing: str


def mean_of_raters_accuracy(
    answers_by_rater: Mapping[Any, Sequence[Any]] | Sequence[Sequence[Any]],
    gold: Sequence[Any],
    missing: Literal["skip", "wrong"] = "skip",
) -> MeanOfRaters:
    """Mean of each rater's accuracy against gold (KoDialogBench human figure).

    `answers_by_rater` maps rater -> answers aligned with `gold` (a list is keyed 0, 1, ...).
    Missing answers are left out of that rater's count ("skip") or count as wrong ("wrong").
    """
    if missing not in ("skip", "wrong"):
        raise ValueError("missing must be 'skip' or 'wrong'")
    if not isinstance(answers_by_rater, Mapping):
        answers_by_rater = dict(enumerate(answers_by_rater))
    raters = []
    for rater, answers in answers_by_rater.items():
        if len(answers) != len(gold):
            raise ValueError(f"rater {rater!r} has {len(answers)} answers for {len(gold)} items")
        if _plain_labels([answers]):  # None is the only missing value: no per-answer check
            pairs = [(a, g) for a, g in zip(answers, gold) if missing == "wrong" or a is not None]
            correct = sum(1 for a, g in pairs if a is not None and a == g)
        else:
            pairs = [(a, g) for a, g in zip(answers, gold) if missing == "wrong" or not is_missing(a)]
            correct = sum(1 for a, g in pairs if not is_missing(a) and a == g)
        raters.append(RaterAccuracy(plain(rater), correct / len(pairs) if pairs else None, correct, len(pairs)))
    accs = [r.accuracy for r in raters if r.accuracy is not None]
    return MeanOfRaters(float(np.mean(accs)) if accs else None,
                        float(np.std(accs)) if accs else None, raters, missing)


@dataclass(frozen=True)
class ItemMeans(Result):
    means: list  # per item: mean of the present ratings, None when there are none
    counts: list  # per item: how many ratings were present


def mean_rating_per_item(ratings_by_item: Sequence[Sequence[Any]]) -> ItemMeans:
    """Mean rating of each item, ignoring missing ratings (None/NaN), never counting them as 0."""
    means, counts = [], []
    for item in ratings_by_item:
        values = present(item)
        if not all(is_number(v) for v in values):
            raise ValueError(f"ratings must be numbers or missing, got {values!r}")
        means.append(float(np.mean(values)) if values else None)
        counts.append(len(values))
    return ItemMeans(means, counts)


def majority_size(k: int) -> int:
    """m of a panel of k: the smallest strict majority, k // 2 + 1 (DialogBench: 2 of 3; 3 of 4)."""
    return k // 2 + 1


@dataclass(frozen=True)
class HumanBaseline(Result):
    k: int  # raters per item, from the campaign's settings
    m: int  # majority_size(k)
    majority: PanelAccuracy
    mean_of_raters: MeanOfRaters


def human_baseline(labels: Sequence[Mapping[Any, Any]], gold: Sequence[Any], k: int) -> HumanBaseline:
    """The human baseline scored both ways, the one rule the API and the report share.

    `labels[i]` maps rater -> answer on item i (raters who did not answer are absent), aligned with `gold`;
    items nobody answered are left out.
    majority: an item is right when at least m = majority_size(k) answers match gold; mean_of_raters: each
    rater's accuracy on the items they answered, averaged.
    """
    # Items nobody has answered yet are not scored: a baseline in progress is not a baseline of wrong answers.
    answered = [n for n, answers in enumerate(labels) if answers]
    labels, gold = [labels[n] for n in answered], [gold[n] for n in answered]
    raters = sorted({rater for answers in labels for rater in answers})
    majority = m_of_k_correct([list(answers.values()) for answers in labels], gold, majority_size(k))
    by_rater = {rater: [answers.get(rater) for answers in labels] for rater in raters}
    return HumanBaseline(k, majority_size(k), majority, mean_of_raters_accuracy(by_rater, gold, missing="skip"))


def median_reading_seconds(seconds: Iterable[float | None]) -> float | None:
    """The median reading time shown on the dashboard, in the hand-in event and in the report.

    The standard library's `statistics.median`: the middle value, or the mean of the two middle values when
    their number is even (as numpy's median). Times not recorded (None, NaN: imported labels) are left out;
    None when none is left.
    """
    if isinstance(seconds, np.ndarray) and seconds.dtype.kind == "f":
        times = seconds[~np.isnan(seconds)].tolist()  # NaN is the only missing value of a float array
    else:
        times = [float(t) for t in seconds if not is_missing(t)]
    return statistics.median(times) if times else None
