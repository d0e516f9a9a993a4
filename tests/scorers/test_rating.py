import math

import pytest

from modeleval.scorers import prompts
from modeleval.scorers.next_word import rating_scores, word_probs, yes_no_scores
from modeleval.scorers.rating import Example, FewShotSelector, build_prompt, rating_from_probs, yes_no_from_probs

from .support import require_packaged_model

require_packaged_model()
pytestmark = pytest.mark.model

POOL = [
    Example("fed-1", "User: Hi!\nSystem: Hi! What's up?\nUser: Nothing much", "System: Want to talk movies?", "3"),
    Example("fed-2", "User: I like hiking.\nSystem: Where do you hike?", "System: banana", "0"),
    Example("fed-3", "User: Any book tips?\nSystem: Do you like mysteries?", "System: Try Agatha Christie.", "4"),
    Example("fed-4", "User: I'm tired today.", "System: Sorry to hear that. Long day?", "3"),
]
QUERY = Example("fed-9", "User: I just got a puppy!", "System: Congratulations! What breed is it?")


@pytest.fixture(scope="module")
def rating_prompt():
    shots = FewShotSelector(POOL, "bm25_both", 3).select(QUERY)
    instruction = prompts.RATING_INSTRUCTION.format(quality="engagingness", low=0, high=4)
    return build_prompt(QUERY, shots, instruction=instruction, quality="Engaging")


def test_prompt_shows_shots_then_the_query(rating_prompt):
    assert len(rating_prompt.example_ids) == 3 and QUERY.id not in rating_prompt.example_ids
    assert rating_prompt.text.endswith("Response: System: Congratulations! What breed is it?\nEngaging score:")
    assert rating_prompt.text.count("Engaging score: ") == 3


def test_expected_rating_from_the_top_three(smol, rating_prompt):
    (score,) = rating_scores(smol.model, smol.tokenizer, [rating_prompt.text])
    assert set(score.raw) == {0, 1, 2, 3, 4}
    assert len(score.top) == 3 and set(score.top) <= set(score.raw)
    assert math.isclose(sum(score.top.values()), 1.0, rel_tol=1e-9)
    assert min(score.raw[r] for r in score.top) >= max(p for r, p in score.raw.items() if r not in score.top)
    assert 0 <= score.expected <= 4
    assert 0 < sum(score.raw.values()) <= 1 + 1e-6


def test_yes_no_is_a_probability(smol):
    texts = [
        "Dialogue:\nUser: I just got a puppy!\nResponse: System: What breed is it?\n"
        "Is the response engaging? Answer yes or no:",
        "Is fire cold? Answer yes or no:",
    ]
    scores = yes_no_scores(smol.model, smol.tokenizer, texts)
    assert len(scores) == 2 and all(0 <= g <= 1 for g in scores)
    (probs,) = word_probs(smol.model, smol.tokenizer, texts[1:], ["yes", "Yes", "no", "No"])
    expected_min = (probs["yes"] + probs["Yes"]) / (probs["yes"] + probs["Yes"] + probs["no"] + probs["No"])
    assert scores[1] >= expected_min - 1e-9  # "YES"/"NO" spellings only add mass


def test_pure_formulas():
    score = rating_from_probs({0: 0.1, 1: 0.2, 2: 0.3, 3: 0.05, 4: 0.01})
    assert score.top == pytest.approx({2: 0.5, 1: 1 / 3, 0: 1 / 6})
    assert score.expected == pytest.approx(2 * 0.5 + 1 / 3)
    assert yes_no_from_probs(0.3, 0.1) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        yes_no_from_probs(0, 0)
