"""Multiple choice by log-likelihood, as lm-evaluation-harness 0.4.x HFLM scores it.

Each option is a request (context, delimiter + option). Its tokens are HFLM's
`_encode_pair`: trailing spaces of the context move to the continuation, then
context_enc = tok(context) and continuation_enc = tok(context + continuation)
[len(context_enc):], both without special tokens; an empty context becomes the
prefix token (BOS, else EOS). The model reads (context_enc + continuation_enc)
[-(max_length + 1):][:-1] and the continuation's log-probabilities are summed.

`score_one_by_one` does exactly that, one forward pass per option: it is the
reference. `score_shared_context` gives the same numbers faster: an item's context
is read once followed by all of its options, each option masked from the others;
prompt starts that several items share (an instruction, few-shot examples, the same
question with its options reordered) are read once per call into a key/value cache
that those items are scored on; and several items are packed into one row with a
block-diagonal mask and positions of their own. An option long enough to be truncated
from the left at max_length reads its own window, as in the reference, packed with
the others.

As in HFLM, where tok(context + continuation) does not split at the context's end
(a token straddles it), the model still reads context_enc followed by the tail of
the joint encoding; that quirk is kept so figures match lm-eval's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import torch

from ._batch import model_device, pad_token_id
from .choice_rules import Rule, per_token, rule_picks


@dataclass(frozen=True)
class MCItem:
    context: str
    options: tuple[str, ...]
    # lm-eval's target_delimiter: what goes between the prompt and each option.
    delimiter: str = " "
    # Encode with the tokenizer's special tokens (a BOS before the context), as DialogBench's
    # _encode_pair does with tokenizer.encode; lm-eval's HFLM adds none.
    add_special_tokens: bool = False

    def requests(self) -> list[tuple[str, str]]:
        return [(self.context, self.delimiter + option) for option in self.options]


@dataclass(frozen=True)
class OptionScore:
    context: str  # the request as given, before HFLM moves trailing spaces
    continuation: str
    logprob: float  # summed over the continuation's tokens
    is_greedy: bool  # every continuation token is the argmax of its position
    n_tokens: int
    n_chars: int  # len(option), without the delimiter: lm-eval's acc_norm length

    @property
    def mean_logprob(self) -> float:
        return per_token(self.logprob, self.n_tokens)


@dataclass(frozen=True)
class MCResult:
    options: tuple[OptionScore, ...]
    n_fallback: int = 0  # options the fast path handed to the reference path

    @property
    def logprobs(self) -> list[float]:
        return [o.logprob for o in self.options]

    @property
    def picks(self) -> dict[str, int]:
        return rule_picks(self.logprobs, [o.n_tokens for o in self.options], [o.n_chars for o in self.options])

    @property
    def pred(self) -> int:
        """acc: highest summed log-likelihood."""
        return self.picks[Rule.ACC]

    @property
    def pred_norm(self) -> int:
        """acc_norm: highest log-likelihood per character of the option (lm-eval)."""
        return self.picks[Rule.ACC_NORM]

    @property
    def pred_per_token(self) -> int:
        """DialogBench's perplexity rule: lowest mean token NLL, i.e. highest mean logprob."""
        return self.picks[Rule.PER_TOKEN]


def mc_accuracy(results: Sequence[MCResult], golds: Sequence[int]) -> dict[str, float]:
    """acc, acc_norm and acc_per_token over items, golds as option indices."""
    if len(results) != len(golds) or not results:
        raise ValueError("need one gold index per result, and at least one result")
    n = len(results)
    return {
        Rule.ACC: sum(r.pred == g for r, g in zip(results, golds, strict=True)) / n,
        Rule.ACC_NORM: sum(r.pred_norm == g for r, g in zip(results, golds, strict=True)) / n,
        "acc_per_token": sum(r.pred_per_token == g for r, g in zip(results, golds, strict=True)) / n,
    }


# --- tokenisation -----------------------------------------------------------------


def _encode(tokenizer, text: str, add_special_tokens: bool = False) -> list[int]:
    # HFLM.tok_encode for causal models: add_special_tokens=False.
    return tokenizer.encode(text, add_special_tokens=add_special_tokens)


def prefix_token_id(tokenizer) -> int:
    """What HFLM feeds as context when the context is empty."""
    return tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id


def encode_pair(tokenizer, context: str, continuation: str,
                add_special_tokens: bool = False) -> tuple[list[int], list[int]]:
    """HFLM's _encode_pair; with `add_special_tokens`, DialogBench's (src/baseEval.py), the same split
    with the tokenizer's special tokens in both encodings and no special case for an empty context."""
    if context == "" and not add_special_tokens:
        return [prefix_token_id(tokenizer)], _encode(tokenizer, continuation)
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
    whole = _encode(tokenizer, context + continuation, add_special_tokens)
    context_enc = _encode(tokenizer, context, add_special_tokens)
    return context_enc, whole[len(context_enc):]


def _checked_pair(tokenizer, context: str, continuation: str, max_length: int, add_special_tokens: bool = False):
    context_enc, continuation_enc = encode_pair(tokenizer, context, continuation, add_special_tokens)
    if not context_enc or not continuation_enc:
        raise ValueError(f"empty context or continuation tokens for {(context, continuation)!r}")
    if len(continuation_enc) > max_length:
        raise ValueError(f"continuation longer than max_length={max_length}")
    return context_enc, continuation_enc


def _model_input(context_enc: list[int], continuation_enc: list[int], max_length: int) -> list[int]:
    return (context_enc + continuation_enc)[-(max_length + 1):][:-1]


def max_length_of(model, tokenizer, max_length: int | None) -> int:
    """`max_length` when given, else the model's own."""
    if max_length:
        return max_length
    from .loading import model_max_length

    return model_max_length(model, tokenizer)


# --- scoring ----------------------------------------------------------------------


def _continuation_score(logits: torch.Tensor, continuation: torch.Tensor) -> tuple[float, bool]:
    """`logits` has one row per continuation token, the row that predicts it."""
    # float32 log-softmax even for half-precision models, where HFLM would stay in
    # the model dtype: identical for the float32 default, saner for bf16.
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    greedy = bool((logprobs.argmax(dim=-1) == continuation).all())
    return float(logprobs.gather(-1, continuation[:, None]).sum()), greedy


def _result(item: MCItem, pairs, scored: Sequence[tuple[float, bool]], n_fallback: int = 0) -> MCResult:
    return MCResult(
        tuple(
            OptionScore(context, continuation, logprob, greedy, len(cont), len(option))
            for option, (context, continuation), (_, cont), (logprob, greedy) in zip(
                item.options, item.requests(), pairs, scored, strict=True
            )
        ),
        n_fallback,
    )


@torch.inference_mode()
def _score_request(model, context_enc, continuation_enc, max_length) -> tuple[float, bool]:
    inp = _model_input(context_enc, continuation_enc, max_length)
    device = model_device(model)
    logits = model(torch.tensor([inp], device=device), use_cache=False).logits[0]
    cont = torch.tensor(continuation_enc, device=device)
    return _continuation_score(logits[-len(continuation_enc):], cont)


def score_one_by_one(model, tokenizer, items: Sequence[MCItem], *, max_length: int | None = None) -> list[MCResult]:
    """Reference path: one unpadded forward pass per (context, option)."""
    max_length = max_length_of(model, tokenizer, max_length)
    results = []
    for item in items:
        pairs = [_checked_pair(tokenizer, c, k, max_length, item.add_special_tokens) for c, k in item.requests()]
        results.append(_result(item, pairs, [_score_request(model, c, k, max_length) for c, k in pairs]))
    return results


@dataclass
class _Block:
    """Options that read the same tokens before them: `head` starts at position 0, and
    each tail (option index, continuation tokens) is scored as if it alone followed it."""

    item: int
    head: list[int]
    tails: list[tuple[int, list[int]]]

    def width(self, base: int) -> int:
        """Columns it takes in a packed row when its first `base` head tokens are cached."""
        return len(self.head) - base + sum(len(cont) - 1 for _, cont in self.tails)


def _blocks(k: int, pairs, max_length: int) -> tuple[list[_Block], int]:
    """An item's blocks: one for every option whose model input is the whole shared context
    followed by the option, and one per option truncated from the left (its own window)."""
    # Under HFLM's encoding every option has the same context tokens; taking the most
    # common keeps this correct should an encoding ever differ per option.
    shared = list(Counter(tuple(ctx) for ctx, _ in pairs).most_common(1)[0][0])
    together, alone = _Block(k, shared, []), []
    for i, (ctx, cont) in enumerate(pairs):
        if ctx == shared and len(ctx) + len(cont) <= max_length + 1:
            together.tails.append((i, cont))
        else:
            inp = _model_input(ctx, cont, max_length)  # ends with cont[:-1]
            alone.append(_Block(k, inp[: len(inp) - len(cont) + 1], [(i, cont)]))
    return ([together] if together.tails else []) + alone, len(alone)


def _causal(n: int) -> torch.Tensor:
    return torch.ones((n, n), dtype=torch.bool).tril()


def _common(a: list[int], b: list[int]) -> int:
    """Tokens two heads share at their start, leaving each at least its last token (whose
    logits score the first option token, so it must be read with the options)."""
    n = min(len(a), len(b)) - 1
    return next((j for j in range(n) if a[j] != b[j]), max(n, 0))


# A prefix is computed on its own only when it spares at least this many tokens.
MIN_SPARED_TOKENS = 32
# Columns per packed row: on CPU one item of about 250 tokens with its options
# (packing more only adds attention over masked columns, measured in perf/RESULTS.md);
# on an accelerator several items, so that rows are not padded to the longest item.
PACK_TOKENS_CPU = 1
PACK_TOKENS = 2048


class _Engine:
    """Scores blocks in packed forward passes over a tree of shared prefixes.

    Heads are sorted, so heads with a common start lie side by side. A run of heads that
    share more than the current prefix is read once into a key/value cache (when that spares
    MIN_SPARED_TOKENS or more) and the run is scored on top of it, recursively; the blocks
    left at a level are packed several to a row, `pack_tokens` columns at most, with a
    block-diagonal mask (a block sees the cached prefix and itself, an option its head and
    itself) and positions that continue each block's own sequence."""

    def __init__(self, model, pad_id: int, batch_size: int, pack_tokens: int):
        self.model, self.pad_id = model, pad_id
        self.batch_size, self.pack_tokens = batch_size, pack_tokens
        self.device, self.dtype = model_device(model), model.dtype
        self.scores: dict[tuple[int, int], tuple[float, bool]] = {}

    def run(self, blocks: list[_Block]) -> dict[tuple[int, int], tuple[float, bool]]:
        blocks = sorted(blocks, key=lambda b: b.head)
        self._level(blocks, 0, None)
        return self.scores

    def _level(self, blocks: list[_Block], base: int, prefix) -> None:
        """Every block here starts with the `base` tokens whose keys and values are `prefix`."""
        leaves, todo = [], [blocks]
        while todo:
            run = todo.pop()
            if len(run) == 1:
                leaves.extend(run)
                continue
            common = [_common(a.head, b.head) for a, b in pairwise(run)]
            shared = min(common)
            if (len(run) - 1) * (shared - base) >= MIN_SPARED_TOKENS:
                self._level(run, shared, self._extend(prefix, run[0].head[base:shared], base))
                continue
            # Too little in common as a whole: split where the heads part soonest, so that
            # groups sharing more (a task's instruction, the same dialogue asked twice) are found.
            cuts = [0] + [k + 1 for k, c in enumerate(common) if c == shared] + [len(run)]
            todo.extend(run[a:b] for a, b in pairwise(cuts))
        rows = self._rows(leaves, base)
        for start in range(0, len(rows), self.batch_size):
            self._forward(rows[start : start + self.batch_size], base, prefix)

    def _cache(self, prefix, rows: int):
        from transformers import DynamicCache

        if prefix is None:
            return None
        return DynamicCache([(k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1)) for k, v in prefix],
                            config=self.model.config)

    @torch.inference_mode()
    def _extend(self, prefix, tokens: list[int], base: int):
        """The keys and values of the prefix followed by `tokens`."""
        cache = self._cache(prefix, 1)
        if cache is None:
            from transformers import DynamicCache

            cache = DynamicCache(config=self.model.config)
        out = self.model(
            input_ids=torch.tensor([tokens], device=self.device),
            position_ids=torch.arange(base, base + len(tokens), device=self.device)[None],
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        return [(layer.keys, layer.values) for layer in out.past_key_values.layers]

    def _rows(self, leaves: list[_Block], base: int) -> list[list[_Block]]:
        """Blocks packed first-fit, longest first, into rows of at most `pack_tokens` columns
        (a longer block gets a row of its own)."""
        rows: list[list[_Block]] = []
        widths: list[int] = []
        for block in sorted(leaves, key=lambda b: -b.width(base)):
            w = block.width(base)
            k = next((r for r, used in enumerate(widths) if used + w <= self.pack_tokens), None)
            if k is None:
                rows.append([block])
                widths.append(w)
            else:
                rows[k].append(block)
                widths[k] += w
        return rows

    @torch.inference_mode()
    def _forward(self, rows: list[list[_Block]], base: int, prefix) -> None:
        width = max(sum(b.width(base) for b in row) for row in rows)
        n = len(rows)
        ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        positions = torch.zeros((n, width), dtype=torch.long)
        # Every column sees the cached prefix; padding columns see only themselves besides,
        # so no query row is ever fully masked.
        allowed = torch.zeros((n, width, base + width), dtype=torch.bool)
        allowed[:, :, :base] = True
        allowed[:, :, base:] = torch.eye(width, dtype=torch.bool)
        wanted = []  # (block, option, continuation, columns whose logits score it)
        for r, row in enumerate(rows):
            at = 0
            for block in row:
                head = block.head[base:]
                end = at + len(head)
                ids[r, at:end] = torch.tensor(head)
                positions[r, at:end] = torch.arange(base, base + len(head))
                allowed[r, at:end, base + at : base + end] = _causal(len(head))
                col = end
                for i, cont in block.tails:
                    stop = col + len(cont) - 1
                    ids[r, col:stop] = torch.tensor(cont[:-1], dtype=torch.long)
                    positions[r, col:stop] = torch.arange(len(block.head), len(block.head) + stop - col)
                    allowed[r, col:stop, base + at : base + end] = True
                    allowed[r, col:stop, base + col : base + stop] = _causal(stop - col)
                    wanted.append((r, block.item, i, cont, [end - 1, *range(col, stop)]))
                    col = stop
                at = col
        # Vocabulary logits only where a continuation token is predicted: the projection
        # onto the vocabulary is a large share of the cost for a small model.
        keep = sorted({column for *_, columns in wanted for column in columns})
        where = {column: k for k, column in enumerate(keep)}
        mask = torch.zeros(allowed.shape, dtype=self.dtype).masked_fill_(~allowed, torch.finfo(self.dtype).min)
        logits = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask[:, None].to(self.device),
            position_ids=positions.to(self.device),
            past_key_values=self._cache(prefix, n),
            use_cache=prefix is not None,
            logits_to_keep=torch.tensor(keep, device=self.device),
        ).logits
        for r, item, i, cont, columns in wanted:
            rows_ = logits[r, [where[column] for column in columns]]
            self.scores[item, i] = _continuation_score(rows_, torch.tensor(cont, device=self.device))


def score_shared_context(
    model,
    tokenizer,
    items: Sequence[MCItem],
    *,
    max_length: int | None = None,
    batch_size: int | None = None,
    pack_tokens: int | None = None,
) -> list[MCResult]:
    """Fast path with the same results as `score_one_by_one` (to float rounding): each
    context read once with all its options, prompt starts shared across items read once
    per call, several items packed into a row of at most `pack_tokens` columns, `batch_size`
    rows per forward pass. Defaults: on CPU one row per pass (a batch only adds padding to
    compute-bound matmuls) of PACK_TOKENS_CPU columns, elsewhere 8 rows of PACK_TOKENS."""
    max_length = max_length_of(model, tokenizer, max_length)
    on_cpu = model_device(model).type == "cpu"
    if batch_size is None:
        batch_size = 1 if on_cpu else 8
    if pack_tokens is None:
        pack_tokens = PACK_TOKENS_CPU if on_cpu else PACK_TOKENS
    pairs, blocks, alone = [], [], []
    for k, item in enumerate(items):
        pairs.append([_checked_pair(tokenizer, c, cont, max_length, item.add_special_tokens)
                      for c, cont in item.requests()])
        mine, n_alone = _blocks(k, pairs[-1], max_length)
        blocks.extend(mine)
        alone.append(n_alone)
    scores = _Engine(model, pad_token_id(tokenizer), batch_size, pack_tokens).run(blocks) if blocks else {}
    return [
        _result(item, item_pairs, [scores[k, i] for i in range(len(item_pairs))], n_alone)
        for k, (item, item_pairs, n_alone) in enumerate(zip(items, pairs, alone, strict=True))
    ]
