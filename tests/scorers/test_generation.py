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


@pytest.mark.slow
def test_a_shared_chat_start_is_read_once_and_the_replies_are_each_whole_prompts(smol):
    """DiQAD's appendix C chat (its instruction and three solved examples before every dialogue): the
    start the prompts share is read once, each batch generates on it, and the greedy replies are those of
    each prompt read whole on its own."""
    from modeleval.scorers._batch import pad_token_id
    from modeleval.scorers.generation import MIN_SHARED_TOKENS, shared_start
    from perf._shared_start_items import diqad_items

    from .test_loglikelihood import Passes

    model, tok = smol.model, smol.tokenizer
    texts = [e["item"].context for e in diqad_items(tok, 3, seed=4)]
    encoded = [tok.encode(t, add_special_tokens=False) for t in texts]
    shared = shared_start(encoded)
    assert shared >= MIN_SHARED_TOKENS and shared > 0.5 * min(map(len, encoded))
    alone = [generate(model, tok, [t], max_new_tokens=6, chat=False)[0] for t in texts]
    with Passes(model, pad_token_id(tok)) as passes:
        together = generate(model, tok, texts, max_new_tokens=6, chat=False, batch_size=2)
    assert together == alone
    assert together == generate(model, tok, texts, max_new_tokens=6, chat=False, batch_size=2, share_start=False)
    # The start once, then each prompt's own tokens and the new ones (padding not counted).
    assert passes.tokens <= shared + sum(len(e) - shared for e in encoded) + 6 * len(texts)
