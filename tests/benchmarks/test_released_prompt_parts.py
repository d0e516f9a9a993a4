"""A released DialogBench record's own content (its question, knowledge, the reply to infill) is read out of its
prompts into the item's fields: people are never shown the prompts (benchmarks.models.MODEL_FIELDS), so what
they need of them has to be a field of its own."""
import pytest

from benchmarks.importers.dialogbench_released import prompt_parts
from studies.dialogbench.recipe import PROMPTS, option_str

OPTIONS = {"A": "yes", "B": "no"}
VALUES = {"option_str": option_str(OPTIONS), "dialogue_content": "speaker1: hi\nspeaker2: hello",
          "test_question": "Who greets first?", "knowledge": "Greetings come first.", "response": "Fine, thanks."}


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Conversational QA En", {"test_question": "Who greets first?"}),
    ("Conversational QA Pretrain En", {"test_question": "Who greets first?"}),
    ("Conversational QA", {"test_question": "Who greets first?"}),  # 【提问】
    ("Knowledge-grounded Dialogue Pretrain En", {"knowledge": "Greetings come first."}),
    ("Dialogue Infilling Pretrain En", {"response": "Fine, thanks."}),  # 【Reply】 before 【User speech】
    ("Dialogue Summarization Pretrain En", {}),  # 【Summary】 at the end is the model's answer
])
def test_content_parts_of_the_prompts(prompt, expected):
    key = "prompt_pretrain" if "Pretrain" in prompt else "prompt_SFT"
    assert prompt_parts({key: PROMPTS[prompt].format(**VALUES)}) == expected


def test_a_field_the_record_gives_wins_over_its_prompt():
    record = {"prompt_SFT": PROMPTS["Conversational QA En"].format(**VALUES), "test_question": "its own"}
    assert prompt_parts(record) == {}
