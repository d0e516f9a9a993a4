import hashlib

from modeleval.scorers import prompts


def test_dialogue_renders_one_line_per_turn():
    turns = [{"speaker": "speaker1", "text": "Hi {there}"}, {"speaker": "speaker2", "text": "Hello."}]
    assert prompts.render_dialogue(turns) == "speaker1: Hi {there}\nspeaker2: Hello."
    assert prompts.render_dialogue(turns, {"speaker1": "A", "speaker2": "B"}) == "A: Hi {there}\nB: Hello."


def test_options_render_lettered():
    assert prompts.render_options(["yes", "no"]) == "A. yes\nB. no"
    assert prompts.render_options({"C": "x", "A": "y"}) == "C. x\nA. y"


def test_templates_fill_with_format_and_keep_braces_in_values():
    text = prompts.MC_LOGLIK_EN.format(instruction="Read.", dialogue="A: {x}", question="Why?")
    assert text == "Read.\n\nDialogue:\nA: {x}\n\nQuestion: Why?\nAnswer:"
    generated = prompts.MC_GENERATE_ZH.format(instruction="读", dialogue="A: 你好", question="为什么？",
                                              options="A. 是")
    assert "A. 是" in generated
    assert "{conversation_1}" in prompts.PAIRWISE_AI_JUDGE


def test_template_hash_is_sha256_of_the_text():
    assert prompts.template_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    assert prompts.template_hash(prompts.MC_LOGLIK_EN) != prompts.template_hash(prompts.MC_LOGLIK_ZH)
