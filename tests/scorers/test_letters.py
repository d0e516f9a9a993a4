import pytest

from modeleval.scorers.letters import extract_option_letter

EN = [
    ("Answer: B", "B"),
    ("answer: (C)", "C"),
    ("The answer is B.", "B"),
    ("The correct answer is (D) because speaker1 is proud.", "D"),
    ("Answer: Option A", "A"),
    ("(B)", "B"),
    ("B. restaurant reservation", "B"),
    ("  C) neutral", "C"),
    ("**D**", "D"),
    ("B", "B"),
    ("I think A is right.", "A"),
    ("I would choose C.", "C"),
    ("The best option is B", "B"),
    ("Option A is wrong; the answer is C", "C"),
    ("A. pride\nB. anger\nC. fear\nD. boredom", None),  # the options listed back
    ("(A) or (B), hard to say", None),
    ("A person would not say that.", None),
    ("I don't know.", None),
    ("", None),
    ("answer: b", None),  # a lower-case letter is not an option
    ("Answer: E", None),  # not a valid letter here
]

ZH = [
    ("答案是B", "B"),
    ("答案：C", "C"),
    ("正确答案为（A）", "A"),
    ("选B", "B"),
    ("我选择D。", "D"),
    ("选项C是正确的", "C"),
    ("我认为是A", "A"),
    ("B、北京", "B"),
    ("（C）", "C"),
    ("这个问题无法回答", None),
    ("A和B都有可能", None),
]


@pytest.mark.parametrize("text, letter", EN)
def test_english(text, letter):
    assert extract_option_letter(text, "ABCD", "en") == letter


@pytest.mark.parametrize("text, letter", ZH)
def test_chinese(text, letter):
    assert extract_option_letter(text, "ABCD", "zh") == letter


def test_letters_limit_the_options():
    assert extract_option_letter("Answer: C", "AB") is None
    assert extract_option_letter("Answer: E", "ABCDE") == "E"


def test_unknown_language_is_refused():
    with pytest.raises(ValueError):
        extract_option_letter("A", language="fr")
