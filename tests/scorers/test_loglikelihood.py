import math

import pytest
import torch

from modeleval.scorers.loglikelihood import (
    MCItem,
    MCResult,
    OptionScore,
    encode_pair,
    mc_accuracy,
    prefix_token_id,
    score_one_by_one,
    score_shared_context,
)

from .dialogues import mc_items
from .support import require_packaged_model

require_packaged_model()
pytestmark = pytest.mark.model

TOL = 1e-4


def extra_items():
    return [
        # Trailing spaces move to the continuation (HFLM), so "Answer: " scores " pride"
        # as "  pride"; single-token and multi-token options side by side.
        MCItem("Speaker 1: I won the lottery!\nQuestion: How does Speaker 1 feel?\nAnswer: ", ("glad", "sad", "x")),
        MCItem("", ("Hello, how are you?", "asdf qwerty")),  # empty context: prefix token
        MCItem("Q: 2+2=\nA:", ("4", " four", "5", "twenty-two")),
    ]


@pytest.fixture(scope="module")
def items():
    return mc_items() + extra_items()


@pytest.fixture(scope="module")
def reference(smol, items):
    return score_one_by_one(smol.model, smol.tokenizer, items)


def assert_same(a: list[MCResult], b: list[MCResult]):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for o, p in zip(x.options, y.options, strict=True):
            fields = ("context", "continuation", "n_tokens", "n_chars")
            assert [getattr(o, f) for f in fields] == [getattr(p, f) for f in fields]
            assert abs(o.logprob - p.logprob) < TOL, (o, p)
            assert o.is_greedy == p.is_greedy


def test_encode_pair_follows_hflm(smol):
    tok = smol.tokenizer
    ctx, cont = encode_pair(tok, "Answer: ", " B")
    assert ctx == tok.encode("Answer:", add_special_tokens=False)  # no BOS
    assert tok.decode(cont) == "  B"  # the trailing space moved over
    whole = tok.encode("Q: 2+2=\nA: 4", add_special_tokens=False)
    ctx, cont = encode_pair(tok, "Q: 2+2=\nA:", " 4")
    assert ctx + cont == whole
    assert encode_pair(tok, "", "hi") == ([tok.bos_token_id], tok.encode("hi", add_special_tokens=False))
    assert prefix_token_id(tok) == tok.bos_token_id


@pytest.mark.parametrize("batch_size", [1, 16])
def test_shared_context_equals_one_by_one(smol, items, reference, batch_size):
    fast = score_shared_context(smol.model, smol.tokenizer, items, batch_size=batch_size)
    assert_same(reference, fast)
    assert all(r.n_fallback == 0 for r in fast)


def test_results_carry_the_request(smol, items, reference):
    tok = smol.tokenizer
    for item, result in zip(items, reference, strict=True):
        assert [o.context for o in result.options] == [item.context] * len(item.options)
        for option, score in zip(item.options, result.options, strict=True):
            assert score.continuation == item.delimiter + option
            assert score.n_chars == len(option)
            assert score.n_tokens == len(encode_pair(tok, item.context, score.continuation)[1])
            assert score.logprob < 0 and math.isfinite(score.logprob)


def test_predictions_follow_the_logprobs(reference):
    for result in reference:
        lp = torch.tensor(result.logprobs, dtype=torch.float64)
        chars = torch.tensor([o.n_chars for o in result.options], dtype=torch.float64)
        tokens = torch.tensor([o.n_tokens for o in result.options], dtype=torch.float64)
        assert result.pred == int(lp.argmax())
        assert result.pred_norm == int((lp / chars).argmax())
        assert result.pred_per_token == int((lp / tokens).argmax())
    golds = [r.pred for r in reference]
    assert mc_accuracy(reference, golds)["acc"] == 1.0


def test_argmax_ties_take_the_first_option():
    scores = tuple(OptionScore("c", f" {o}", -2.0, False, 2, 2) for o in "ab")
    result = MCResult(scores)
    assert (result.pred, result.pred_norm, result.pred_per_token) == (0, 0, 0)


def test_is_greedy_marks_the_models_own_continuation(smol):
    model, tok = smol.model, smol.tokenizer
    context = "Speaker 1: What is the capital of France?\nSpeaker 2: The capital of France is"
    ids = tok.encode(context, add_special_tokens=False)
    with torch.inference_mode():
        for _ in range(4):
            ids.append(int(model(torch.tensor([ids])).logits[0, -1].argmax()))
    # The longest greedy tail that survives decode + re-encode (" Paris.\n\n" does not:
    # the two newlines re-encode as one token).
    n = next(n for n in range(4, 0, -1) if encode_pair(tok, context, tok.decode(ids[-4:][:n]))[1] == ids[-4:][:n])
    greedy = tok.decode(ids[-4:][:n])
    item = MCItem(context, (greedy, " bananas and trombones"), delimiter="")
    for scorer in (score_one_by_one, score_shared_context):
        first, second = scorer(model, tok, [item])[0].options
        assert first.is_greedy and not second.is_greedy
        assert first.logprob > second.logprob


def test_options_past_max_length_fall_back_to_one_by_one(smol, items, reference):
    # With a short window, long options are truncated from the left, so their model
    # input no longer starts with the shared context: the fast path must hand them over.
    item = items[2]  # the laptop dialogue, options from 4 to about 20 tokens
    ctx, _ = encode_pair(smol.tokenizer, item.context, item.delimiter + item.options[0])
    max_length = len(ctx) + 6
    ref = score_one_by_one(smol.model, smol.tokenizer, [item], max_length=max_length)
    fast = score_shared_context(smol.model, smol.tokenizer, [item], max_length=max_length)
    assert 0 < fast[0].n_fallback < len(item.options)
    assert_same(ref, fast)
    # and truncation really changed the long options' scores
    assert abs(ref[0].options[0].logprob - reference[2].options[0].logprob) > TOL


def test_empty_continuation_is_refused(smol):
    with pytest.raises(ValueError):
        score_shared_context(smol.model, smol.tokenizer, [MCItem("Answer:", ("",), delimiter="")])


# --- packing and shared prefixes ---------------------------------------------------

# Two worked examples before every question, as a few-shot prompt puts them: every item
# starts with the same tokens, which the fast path reads once per call.
SHOTS = "".join(
    f"{item.context}{item.delimiter}{item.options[0]}\n\n" for item in mc_items()[3:5]
)


def fewshot_items():
    items = [MCItem(SHOTS + item.context, item.options, item.delimiter) for item in mc_items()[:2] + mc_items()[5:6]]
    # The same question again with its options in another order (a circular variant): the
    # whole context is shared.
    return items + [MCItem(items[0].context, items[0].options[::-1], items[0].delimiter)]


@pytest.fixture(scope="module")
def fewshot():
    return fewshot_items()


@pytest.fixture(scope="module")
def fewshot_reference(smol, fewshot):
    return score_one_by_one(smol.model, smol.tokenizer, fewshot)


class Passes:
    """Counts the model's forward passes and the tokens they read (padding excluded)."""

    def __init__(self, model, pad_id):
        self.model, self.pad_id, self.calls, self.tokens = model, pad_id, 0, 0

    def __enter__(self):
        forward = self.model.forward

        def counted(*args, input_ids=None, **kwargs):
            self.calls += 1
            self.tokens += int((input_ids != self.pad_id).sum())
            return forward(*args, input_ids=input_ids, **kwargs)

        self.model.forward = counted
        return self

    def __exit__(self, *exc):
        del self.model.forward


def assert_same_picks(a: list[MCResult], b: list[MCResult]):
    assert [(r.pred, r.pred_norm, r.pred_per_token) for r in a] == [(r.pred, r.pred_norm, r.pred_per_token) for r in b]


@pytest.mark.parametrize("pack_tokens, batch_size", [(4096, 1), (200, 2)])
def test_packed_items_with_shared_prefixes_equal_one_by_one(smol, fewshot, fewshot_reference, pack_tokens,
                                                            batch_size):
    from modeleval.scorers._batch import pad_token_id

    tok = smol.tokenizer
    with Passes(smol.model, pad_token_id(tok)) as passes:
        fast = score_shared_context(smol.model, tok, fewshot, pack_tokens=pack_tokens, batch_size=batch_size)
    assert_same(fewshot_reference, fast)
    assert_same_picks(fewshot_reference, fast)
    # Each context once with its options would be this many tokens; the shots are read once.
    contexts = sum(len(encode_pair(tok, i.context, i.delimiter + i.options[0])[0]) for i in fewshot)
    options = sum(len(encode_pair(tok, i.context, c)[1]) - 1 for i in fewshot for _, c in i.requests())
    shots = len(tok.encode(SHOTS.rstrip(), add_special_tokens=False))
    assert passes.tokens <= contexts + options - (len(fewshot) - 1) * (shots - 2)


def test_packed_items_truncated_from_the_left_equal_one_by_one(smol, fewshot):
    # A window shorter than every prompt: each option gets its own window (the shots cut from
    # the left by different amounts), packed side by side with the others.
    tok = smol.tokenizer
    shortest = min(len(encode_pair(tok, i.context, i.delimiter + i.options[0])[0]) for i in fewshot)
    max_length = shortest - 10
    items = fewshot[:2]
    ref = score_one_by_one(smol.model, tok, items, max_length=max_length)
    fast = score_shared_context(smol.model, tok, items, max_length=max_length, pack_tokens=4096)
    assert all(r.n_fallback == len(r.options) for r in fast)
    assert_same(ref, fast)
    assert_same_picks(ref, fast)


def test_dialogbench_tasks_read_their_shared_instruction_once_and_score_as_each_item_whole(smol):
    """Prefix reuse across items, at the scorer's CPU defaults: DialogBench-shaped items (each task's
    pretrain prompt as the preset asks it, perf/_dialogbench_items.py) score as each item read whole,
    one option at a time, while each task's shared instruction is read once for all its items."""
    from os.path import commonprefix

    from modeleval.scorers._batch import pad_token_id
    from perf._dialogbench_items import dialogbench_items
    from studies.dialogbench import recipe as dialogbench

    model, tok = smol.model, smol.tokenizer
    entries = dialogbench_items(tasks=2, items=8, seed=5, turns=(2, 4))
    items = [e["item"] for e in entries]
    assert all(item.add_special_tokens and item.delimiter == "" for item in items)
    reference = score_one_by_one(model, tok, items, max_length=dialogbench.MAX_LEN)
    with Passes(model, pad_token_id(tok)) as passes:
        fast = score_shared_context(model, tok, items, max_length=dialogbench.MAX_LEN)
    assert_same(reference, fast)
    assert_same_picks(reference, fast)
    assert max(abs(a.logprob - b.logprob) for r, f in zip(reference, fast, strict=True)
               for a, b in zip(r.options, f.options, strict=True)) < 1e-3

    contexts = {e["task"]: [] for e in entries}
    for entry in entries:
        item = entry["item"]
        contexts[entry["task"]].append(encode_pair(tok, item.context, item.options[0], True)[0])
    before = sum(len(ctx) for task in contexts.values() for ctx in task)
    before += sum(len(encode_pair(tok, i.context, c, True)[1]) - 1 for i in items for _, c in i.requests())
    for task, ctxs in contexts.items():
        # The shared start covers the task's whole instruction, up to the dialogue.
        instruction = dialogbench.PROMPTS[dialogbench.prompt_key(task, "en", "pretrain")].split("{")[0]
        assert len(commonprefix(ctxs)) >= len(tok.encode(instruction)) - 1
    spared = sum((len(ctxs) - 1) * (len(commonprefix(ctxs)) - 1) for ctxs in contexts.values())
    assert passes.tokens <= before - spared


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["huynh", "diqad"])
def test_prompts_sharing_a_long_start_read_it_once_and_score_as_each_whole_prompt(smol, shape):
    """Huynh et al.'s FED prompts (the task line and three rated dialogs of a seed before each item) and
    DiQAD's appendix C chat (its instruction and three examples before each dialogue), as the rating
    mode reads them (every rating word, with and without a space, right after the prompt): the shared
    start is read once for the items that share it, and every log-likelihood is within 1e-3 of the
    prompt read whole, one option at a time."""
    from os.path import commonprefix

    from modeleval.scorers._batch import pad_token_id
    from perf._shared_start_items import diqad_items, fed_path, huynh_items

    model, tok = smol.model, smol.tokenizer
    if shape == "huynh":
        if not fed_path().is_file():
            pytest.skip(f"FED data not found at {fed_path()} (set HB_SHARED_DATA)")
        entries = huynh_items(6, seed=3)  # two items, each with the examples of seeds 0, 1 and 2
    else:
        entries = diqad_items(tok, 2, seed=3)
    items = [e["item"] for e in entries]
    reference = score_one_by_one(model, tok, items)
    with Passes(model, pad_token_id(tok)) as passes:
        fast = score_shared_context(model, tok, items)
    assert_same(reference, fast)
    assert_same_picks(reference, fast)
    assert max(abs(a.logprob - b.logprob) for r, f in zip(reference, fast, strict=True)
               for a, b in zip(r.options, f.options, strict=True)) < 1e-3

    groups = {}
    for entry, item in zip(entries, items, strict=True):
        groups.setdefault(entry["id"].rsplit("-seed-", 1)[-1] if shape == "huynh" else "", []).append(
            encode_pair(tok, item.context, item.options[0])[0])
    shared = {key: len(commonprefix(ctxs)) for key, ctxs in groups.items()}
    # A long start: the examples are most of each prompt.
    assert min(shared.values()) >= 300
    whole = sum(len(ctx) for ctxs in groups.values() for ctx in ctxs)
    options = sum(len(encode_pair(tok, i.context, c)[1]) - 1 for i in items for _, c in i.requests())
    spared = sum((len(groups[key]) - 1) * (n - 1) for key, n in shared.items())
    assert passes.tokens <= whole + options - spared
