import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.aggregation import (
    m_of_k_correct,
    majority_label,
    majority_vote,
    mean_of_raters_accuracy,
    mean_rating_per_item,
)

FAST = settings(max_examples=50, deadline=None)
votes_strategy = st.lists(st.one_of(st.none(), st.sampled_from(["A", "B", "C", "D"])), max_size=9)


@FAST
@given(votes_strategy, st.sampled_from(["none", "first", "lowest", "random"]))
def test_majority_vote_against_counting(labels, rule):
    present = [v for v in labels if v is not None]
    result = majority_vote(labels, tie_rule=rule, seed=1)
    assert result.n_votes == len(present) and result.votes == dict(Counter(present))
    assert result.tie_rule == rule and result.tie_rule_text
    if not present:
        assert result.label is None and not result.is_tie
        return
    counts = sorted(Counter(present).values(), reverse=True)
    top = counts[0]
    tied = [v for v in dict.fromkeys(present) if present.count(v) == top]
    assert result.is_tie == (len(tied) > 1)
    assert result.margin == (0 if len(tied) > 1 else top - (counts[1] if len(counts) > 1 else 0))
    if len(tied) == 1:
        assert result.label == tied[0]
    elif rule == "none":
        assert result.label is None
    elif rule == "first":
        assert result.label == tied[0]
    elif rule == "lowest":
        assert result.label == min(tied)
    else:
        assert result.label in tied
        assert majority_vote(labels, tie_rule=rule, seed=1).label == result.label


@FAST
@given(st.lists(st.one_of(st.none(), st.just(float("nan")), st.sampled_from(["A", "B", 1, 2, True]),
                          st.sampled_from([np.int64(1), np.str_("A")])), max_size=9))
def test_majority_label_is_the_majority_votes_label(labels):
    assert majority_label(labels) == majority_vote(labels).label
    assert type(majority_label(labels)) is type(majority_vote(labels).label)


def test_majority_label_on_a_tie_and_without_votes():
    assert majority_label(["A", "B"]) is None and majority_label([None, float("nan")]) is None
    assert majority_label(["B", "A", "B"]) == "B"


def test_majority_vote_rejects_unknown_rule():
    with pytest.raises(ValueError):
        majority_vote(["a"], tie_rule="coin")


def test_random_tie_break_uses_every_tied_label():
    picks = {majority_vote(["x", "y", "z"], tie_rule="random", seed=s).label for s in range(50)}
    assert picks == {"x", "y", "z"}


def test_two_of_three_experts():
    answers = [["A", "A", "B"], ["A", "B", "C"], ["C", "C", "C"], ["B", None, "B"], ["A", None, None]]
    gold = ["A", "A", "C", "B", "A"]
    result = m_of_k_correct(answers, gold, m=2)
    assert result.item_correct == [True, False, True, True, False]
    assert result.accuracy == pytest.approx(3 / 5) and result.n_correct == 3


@FAST
@given(st.lists(st.tuples(st.lists(st.integers(0, 3), min_size=3, max_size=3), st.integers(0, 3)), max_size=20),
       st.integers(1, 3))
def test_m_of_k_against_numpy(rows, m):
    answers = [r[0] for r in rows]
    gold = [r[1] for r in rows]
    result = m_of_k_correct(answers, gold, m)
    hits = (np.array(answers).reshape(-1, 3) == np.array(gold).reshape(-1, 1)).sum(axis=1) >= m
    assert result.item_correct == hits.tolist()
    assert result.accuracy == (pytest.approx(hits.mean()) if rows else None)


def test_mean_of_raters_accuracy_worked_example():
    gold = ["a", "b", "c", "d"]
    result = mean_of_raters_accuracy({"r1": ["a", "b", "x", "x"], "r2": ["a", "b", "c", "d"],
                                      "r3": ["a", "b", "c", None]}, gold)
    assert [r.accuracy for r in result.raters] == [0.5, 1.0, 1.0]  # r3's missing answer is skipped
    assert result.accuracy == pytest.approx(2.5 / 3)
    wrong = mean_of_raters_accuracy([["a", "b", "x", "x"], ["a", "b", "c", None]], gold, missing="wrong")
    assert [r.accuracy for r in wrong.raters] == [0.5, 0.75] and wrong.accuracy == pytest.approx(0.625)
    with pytest.raises(ValueError, match="answers for"):
        mean_of_raters_accuracy([["a"]], gold)


@FAST
@given(st.lists(st.lists(st.one_of(st.none(), st.just(math.nan), st.integers(1, 5), st.floats(0, 5)), max_size=5),
                max_size=10))
def test_mean_rating_ignores_missing(items):
    result = mean_rating_per_item(items)
    for item, mean, count in zip(items, result.means, result.counts, strict=True):
        values = np.array([np.nan if v is None else v for v in item], dtype=float)
        assert count == int(np.sum(~np.isnan(values)))
        assert mean == (pytest.approx(np.nanmean(values)) if count else None)


def test_mean_rating_rejects_text():
    with pytest.raises(ValueError):
        mean_rating_per_item([[1, "N/A (no answer)"]])


def test_human_baseline_takes_m_from_k_and_leaves_unanswered_items_out():
    from metrics import human_baseline

    labels = [{"a": 1, "b": 1, "c": 0, "d": 0}, {"a": 1, "b": 1, "c": 1, "d": 0}, {}]
    four = human_baseline(labels, [1, 1, 1], k=4)
    assert (four.m, four.majority.n_items, four.majority.accuracy) == (3, 2, 0.5)
    three = human_baseline([{r: v for r, v in a.items() if r != "d"} for a in labels], [1, 1, 1], k=3)
    assert (three.m, three.majority.accuracy) == (2, 1.0)
    assert four.mean_of_raters.accuracy == pytest.approx((1 + 1 + 0.5 + 0) / 4)


def test_median_reading_seconds_is_the_two_middle_values_mean_as_numpy():
    from metrics import median_reading_seconds

    times = [12.0, None, 3.5, float("nan"), 40.0, 7.25]
    assert median_reading_seconds(times) == np.median([12.0, 3.5, 40.0, 7.25]) == 9.625
    assert median_reading_seconds([None]) is None
