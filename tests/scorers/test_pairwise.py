import pytest

from modeleval.scorers.pairwise import combine_orders, pairwise_prompts, parse_pairwise
from studies.vocabulary import BOTH, LOSE, NEITHER, ONE, TIE, TWO, WIN, outcome


def test_prompts_swap_the_conversations():
    ab, ba = pairwise_prompts("A: hi\nB: hello", "A: yo\nB: sup")
    assert ab.index("A: hi") < ab.index("A: yo")
    assert ba.index("A: yo") < ba.index("A: hi")


@pytest.mark.parametrize(
    "text, label",
    [
        ("Conversation 1", ONE),
        ("Answer: Conversation 2.", TWO),
        ("conversation two", TWO),
        ("2", TWO),
        ("Both", BOTH),
        ("Both conversations involve an AI.", BOTH),
        ("Neither conversation 1 nor 2", NEITHER),
        ("None of them.", NEITHER),
        ("Conversation 2\nReason: conversation 1 sounds natural.", TWO),
        ("对话1", ONE),
        ("两个都是AI", BOTH),
        ("都不是", NEITHER),
        ("Conversation 1 and conversation 2", None),
        ("I cannot tell.", None),
        ("", None),
    ],
)
def test_parse(text, label):
    assert parse_pairwise(text) == label


def test_outcome_for_a_in_each_position():
    # The conversation picked as AI-involved loses.
    assert outcome(ONE, 1) == LOSE and outcome(TWO, 1) == WIN
    assert outcome(ONE, 2) == WIN and outcome(TWO, 2) == LOSE
    assert outcome(BOTH, 1) == outcome(NEITHER, 2) == TIE
    assert outcome(ONE, 1, picked_loses=False) == WIN
    assert outcome(None, 1) is None


@pytest.mark.parametrize(
    "ab, ba, consistent, summed",
    [
        (TWO, ONE, WIN, WIN),  # B picked in both orders
        (ONE, TWO, LOSE, LOSE),
        (ONE, ONE, TIE, TIE),  # position 1 picked both times: position bias
        (TWO, BOTH, TIE, WIN),
        (NEITHER, BOTH, TIE, TIE),
        (None, ONE, None, None),
    ],
)
def test_combine_orders(ab, ba, consistent, summed):
    assert combine_orders(ab, ba) == consistent
    assert combine_orders(ab, ba, rule="sum") == summed


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError):
        combine_orders(ONE, TWO, rule="max")
