import pytest

from modeleval.scorers import prompts
from modeleval.scorers.generation import chat_prompt, generate
from modeleval.scorers.letters import extract_option_letter

from .dialogues import DIALOGUES, EN_INSTRUCTION, dialogue_text
from .support import require_packaged_model

require_packaged_model()
pytestmark = pytest.mark.model


def mc_prompt(turns, question, options):
    return prompts.MC_GENERATE_EN.format(
        instruction=EN_INSTRUCTION,
        dialogue=dialogue_text(turns),
        question=question,
        options=prompts.render_options(options),
    )


def test_chat_template_wraps_the_user_turn(smol):
    text = chat_prompt(smol.tokenizer, "Which option?", system="You answer with one letter.")
    assert text.startswith("<|im_start|>system\nYou answer with one letter.<|im_end|>")
    assert text.endswith("<|im_start|>user\nWhich option?<|im_end|>\n<|im_start|>assistant\n")


def test_greedy_generation_is_batch_independent(smol):
    texts = [mc_prompt(*DIALOGUES[0]), "Say hello."]
    batched = generate(smol.model, smol.tokenizer, texts, max_new_tokens=8)
    alone = [generate(smol.model, smol.tokenizer, [t], max_new_tokens=8)[0] for t in texts]
    assert batched == alone
    assert all(isinstance(t, str) and t and "<|im_end|>" not in t for t in batched)
    assert all(extract_option_letter(text) in (*"ABCD", None) for text in batched)


def test_raw_prompts_skip_the_template(smol):
    (reply,) = generate(smol.model, smol.tokenizer, ["The capital of France is"], max_new_tokens=3, chat=False)
    assert "Paris" in reply
