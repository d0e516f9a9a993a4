"""A question's values, each read by one function of benchmarks.formschema."""
from benchmarks.formschema import primary_values, question_values, rating_scale, rating_values

SCALE = {"key": "q", "type": "scale", "scale": {"min": 1, "max": 3}}
YES_NO = {"key": "yn", "type": "boolean"}
QUALITY = {"key": "quality", "type": "single_choice",
           "options": [{"value": 2}, {"value": 0}, {"value": 1}, {"value": -1, "excludes": True}]}
HALVES = {"key": "h", "type": "single_choice", "options": [{"value": 0.5}, {"value": 1}]}
WORDS = {"key": "w", "type": "single_choice", "options": [{"value": "a"}, {"value": "b"}]}
FROM_ITEM = {"key": "mc", "type": "single_choice", "options": "item"}


def test_the_values_a_question_can_take():
    assert question_values(SCALE) == [1, 2, 3]
    assert question_values(YES_NO) == [False, True]
    assert question_values(QUALITY) == [2, 0, 1, -1]
    assert question_values(FROM_ITEM, {"options": {"A": "x", "B": "y"}}) == ["A", "B"]
    assert question_values({"key": "t", "type": "text"}) is None
    assert primary_values({"primary": "mc", "questions": [WORDS, FROM_ITEM]}, {"options": {"C": "z"}}) == ["C"]


def test_ratings_in_the_forms_order_for_reports_and_low_to_high_integers_for_a_model():
    assert rating_values(QUALITY) == [2, 0, 1] and rating_scale(QUALITY) == [0, 1, 2]
    assert rating_values(YES_NO) == [False, True] and rating_scale(YES_NO) is None
    assert rating_values(HALVES) == [0.5, 1] and rating_scale(HALVES) is None
    assert rating_values(SCALE) == rating_scale(SCALE) == [1, 2, 3]
    assert rating_values(WORDS) is None and rating_scale(WORDS) is None
