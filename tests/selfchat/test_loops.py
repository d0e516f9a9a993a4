import pytest

from modeleval.scorers.loops import LOSE, TIE, WIN, char_ratio, cut_at_loop, loop_match, loop_start, token_overlap

SEED = ["You look rather pale. Are you feeling well?", "Not very. I was sick most of the night."]
LOOPING = SEED + [
    "What seems to be the matter? Is it the flu?",
    "No, I think it was something I ate at the new restaurant.",
    "That's too bad. I hope you feel better soon.",
    "Thanks, I hope so too.",
    "That's too bad. I hope you feel better soon!",  # repeats utterance 4 (two back)
    "Thanks, I hope so too.",
]
NOT_LOOPING = SEED + [
    "What seems to be the matter? Is it the flu?",
    "No, I think it was something I ate at the new restaurant.",
    "Which restaurant? The one on Main Street?",
    "Yes, the Italian place that opened last week.",
]


@pytest.mark.parametrize("similarity", ["char_ratio", "token_overlap"])
def test_loop_found_at_the_first_repeat(similarity):
    assert loop_start(LOOPING, similarity=similarity, threshold=0.9, first=2) == 6
    assert cut_at_loop(LOOPING, 6) == LOOPING[:6]
    assert loop_start(NOT_LOOPING, similarity=similarity, threshold=0.9, first=2) is None
    assert cut_at_loop(NOT_LOOPING, None) == NOT_LOOPING


@pytest.mark.parametrize("similarity", ["char_ratio", "token_overlap"])
def test_echo_of_the_previous_turn_loops(similarity):
    assert loop_start(SEED + ["Not very. I was sick most of the night."], similarity=similarity, first=2) == 2


def test_threshold_and_first_are_settings():
    near = ["I love hiking in the mountains.", "I love hiking in the hills."]
    assert char_ratio(*near) < 0.9 < 1.0
    assert loop_start(near, threshold=0.9) is None
    assert loop_start(near, threshold=0.7) == 1
    # The human seed is left alone when only generated turns may loop.
    assert loop_start(["Hi.", "Hi.", "How was your day?"], first=2) is None
    assert loop_start(["Hi.", "Hi.", "How was your day?"]) == 1


def test_similarities():
    assert token_overlap("The cat sat.", "the CAT sat") == 1.0
    assert token_overlap("a b", "c d") == 0.0
    assert token_overlap("...", "!") == 1.0
    assert char_ratio("abc", "abc") == 1.0
    with pytest.raises(ValueError):
        loop_start(LOOPING, similarity="cosine")


def test_match_rules():
    assert loop_match(5, 7) == TIE
    assert loop_match(5, None) == LOSE
    assert loop_match(None, 3) == WIN
    assert loop_match(None, None) is None  # the judge decides
