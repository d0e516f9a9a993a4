from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modeleval.scorers.positions import (
    accuracy_by_position,
    circular_permutations,
    permute_options,
)

option_lists = st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=6, unique=True)


@given(options=option_lists, data=st.data())
def test_permute_puts_gold_where_asked(options, data):
    gold = data.draw(st.integers(0, len(options) - 1))
    target = data.draw(st.integers(0, len(options) - 1))
    moved, new_gold = permute_options(options, gold, target)
    assert new_gold == target and moved[target] == options[gold]
    assert Counter(moved) == Counter(options)
    assert sum(a != b for a, b in zip(moved, options, strict=True)) in (0, 2)  # one swap at most


@given(options=option_lists, data=st.data())
def test_permute_letter_keyed_options(options, data):
    keyed = dict(zip("ABCDEF", options, strict=False))
    gold, target = data.draw(st.sampled_from(list(keyed))), data.draw(st.sampled_from(list(keyed)))
    moved, new_gold = permute_options(keyed, gold, target)
    assert list(moved) == list(keyed) and new_gold == target and moved[target] == keyed[gold]
    assert sorted(moved.values()) == sorted(keyed.values())


@given(options=option_lists, data=st.data())
def test_circular_permutations_visit_every_position(options, data):
    gold = data.draw(st.integers(0, len(options) - 1))
    perms = circular_permutations(tuple(options), gold)
    assert [g for _, g in perms] == list(range(len(options)))
    for perm, g in perms:
        assert isinstance(perm, tuple) and perm[g] == options[gold]
        assert Counter(perm) == Counter(options)
        # a rotation: the cyclic order is kept
        shift = perm.index(options[0])
        assert list(perm[shift:] + perm[:shift]) == options


def test_circular_permutations_keep_letter_keys():
    perms = circular_permutations({"A": "x", "B": "y", "C": "z"}, "B")
    assert [g for _, g in perms] == ["A", "B", "C"]
    assert perms[0] == ({"A": "y", "B": "z", "C": "x"}, "A")


def test_unknown_position_is_refused():
    with pytest.raises(KeyError):
        permute_options(["a", "b"], 0, 5)


def test_accuracy_by_position_counts_unparsable_as_wrong():
    records = [("A", "A"), ("A", "B"), ("B", "B"), ("B", None), ("C", "C")]
    acc = accuracy_by_position(records)
    assert {p: (a.correct, a.total) for p, a in acc.items()} == {"A": (1, 2), "B": (1, 2), "C": (1, 1)}
    assert acc["A"].accuracy == 0.5
