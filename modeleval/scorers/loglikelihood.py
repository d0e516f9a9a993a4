"""Multiple choice by log-likelihood, as lm-evaluation-harness 0.4.x HFLM scores it.

Each option is a request (context, delimiter + option). Its tokens are HFLM's
`_encode_pair`: trailing spaces of the context move to the continuation, then
context_enc = tok(context) and continuation_enc = tok(context + continuation)
[len(context_enc):], both without special tokens; an empty context becomes the
prefix token (BOS, else EOS). The model reads (context_enc + continuation_enc)
[-(max_length + 1):][:-1] and the continuation's log-probabilities are summed.

`score_one_by_one` does exactly that, one forward pass per option: it is the
reference. `score_shared_context` gives the same numbers faster: one forward
pass reads an item's context once followed by all of its options, each option
masked from the others, and items are batched by length. Any option whose model input does not start with the shared
context tokens is scored by the reference path instead: with HFLM's encoding every
option's context tokens are tok(context), so this is an option long enough to be
truncated from the left at max_length.

As in HFLM, where tok(context + continuation) does not split at the context's end
(a token straddles it), the model still reads context_enc followed by the tail of
the joint encoding; that quirk is kept so figures match lm-eval's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import torch

from ._batch import model_device, pad_token_id


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
        return self.logprob / self.n_tokens


def _argmax(values: Sequence[float]) -> int:
    # First of equal maxima, as numpy.argmax in lm-eval.
    return max(range(len(values)), key=lambda i: (values[i], -i))


@dataclass(frozen=True)
class MCResult:
    options: tuple[OptionScore, ...]
    n_fallback: int = 0  # options the fast path handed to the reference path

    @property
    def logprobs(self) -> list[float]:
        return [o.logprob for o in self.options]

    @property
    def pred(self) -> int:
        """acc: highest summed log-likelihood."""
        return _argmax(self.logprobs)

    @property
    def pred_norm(self) -> int:
        """acc_norm: highest log-likelihood per character of the option (lm-eval)."""
        return _argmax([o.logprob / max(o.n_chars, 1) for o in self.options])

    @property
    def pred_per_token(self) -> int:
        """DialogBench's perplexity rule: lowest mean token NLL, i.e. highest mean logprob."""
        return _argmax([o.mean_logprob for o in self.options])


def mc_accuracy(results: Sequence[MCResult], golds: Sequence[int]) -> dict[str, float]:
    """acc, acc_norm and acc_per_token over items, golds as option indices."""
    if len(results) != len(golds) or not results:
        raise ValueError("need one gold index per result, and at least one result")
    n = len(results)
    return {
        "acc": sum(r.pred == g for r, g in zip(results, golds)) / n,
        "acc_norm": sum(r.pred_norm == g for r, g in zip(results, golds)) / n,
        "acc_per_token": sum(r.pred_per_token == g for r, g in zip(results, golds)) / n,
    }


# --- tokenisation -----------------------------------------------------------------


def _encode(tokenizer, text: str, add_special_tokens: bool = False) -> list[int]:
    # HFLM.tok_encode for causal models: add_special_tokens=False.
    return tokenizer.encode(text, add_special_tokens=add_special_tokens)


def prefix_token_id(tokenizer) -> int:
    """What HFLM feeds as context when the context is empty."""
    return tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id


def encode_pair(tokenizer, context: str, continuation: str, add_special_tokens: bool = False) -> tuple[list[int], list[int]]:
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
class _Prepared:
    item: MCItem
    pairs: list[tuple[list[int], list[int]]]
    shared: list[int]  # the context tokens every shareable option starts with
    shareable: list[bool]


def _prepare(tokenizer, item: MCItem, max_length: int) -> _Prepared:
    pairs = [_checked_pair(tokenizer, c, k, max_length, item.add_special_tokens) for c, k in item.requests()]
    # Under HFLM's encoding every option has the same context tokens; taking the most
    # common keeps the fast path correct should an encoding ever differ per option.
    shared = list(Counter(tuple(ctx) for ctx, _ in pairs).most_common(1)[0][0])
    shareable = [ctx == shared and len(ctx) + len(cont) <= max_length + 1 for ctx, cont in pairs]
    return _Prepared(item, pairs, shared, shareable)


def _causal(n: int) -> torch.Tensor:
    return torch.ones((n, n), dtype=torch.bool).tril()


def _pack(p: _Prepared) -> tuple[list[int], list[tuple[int, int, list[int]]]]:
    """One row for an item: its context, then every shareable option's tokens but
    its last, back to back. Spans are (option index, first column, option tokens)."""
    tokens, spans = list(p.shared), []
    for i, ok in enumerate(p.shareable):
        if ok:
            continuation = p.pairs[i][1]
            spans.append((i, len(tokens), continuation))
            tokens.extend(continuation[:-1])
    return tokens, spans


@torch.inference_mode()
def _score_batch(model, batch: list[_Prepared], pad_id: int) -> list[dict[int, tuple[float, bool]]]:
    """Score the shareable options of a batch of items in one forward pass. Each row
    packs an item's context and its options; the mask lets an option see the context
    and its own earlier tokens only, and its positions restart where the context
    ends, so every option is scored exactly as if it alone followed the context."""
    device = model_device(model)
    packed = [_pack(p) for p in batch]
    width = max(len(tokens) for tokens, _ in packed)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    positions = torch.zeros((len(batch), width), dtype=torch.long)
    # Padding columns see only themselves: no query row is ever fully masked.
    allowed = torch.eye(width, dtype=torch.bool).repeat(len(batch), 1, 1)
    wanted: list[list[list[int]]] = []  # per row, per option: the columns whose logits score it
    for b, (p, (tokens, spans)) in enumerate(zip(batch, packed)):
        n_context = len(p.shared)
        ids[b, : len(tokens)] = torch.tensor(tokens)
        positions[b, :n_context] = torch.arange(n_context)
        allowed[b, :n_context, :n_context] = _causal(n_context)
        wanted.append([])
        for _, start, continuation in spans:
            end = start + len(continuation) - 1
            positions[b, start:end] = torch.arange(n_context, n_context + end - start)
            allowed[b, start:end, :n_context] = True
            allowed[b, start:end, start:end] = _causal(end - start)
            wanted[-1].append([n_context - 1, *range(start, end)])
    # Vocabulary logits only where a continuation token is predicted: the projection
    # onto the vocabulary is a large share of the cost for a small model.
    keep = sorted({column for row in wanted for columns in row for column in columns})
    where = {column: k for k, column in enumerate(keep)}
    dtype = model.dtype
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)
    logits = model(
        input_ids=ids.to(device),
        attention_mask=mask[:, None].to(device),
        position_ids=positions.to(device),
        logits_to_keep=torch.tensor(keep, device=device),
        use_cache=False,
    ).logits

    scores: list[dict[int, tuple[float, bool]]] = [{} for _ in batch]
    for b, ((_, spans), row) in enumerate(zip(packed, wanted)):
        for (i, _, continuation), columns in zip(spans, row):
            rows = logits[b, [where[column] for column in columns]]
            scores[b][i] = _continuation_score(rows, torch.tensor(continuation, device=device))
    return scores


def score_shared_context(
    model,
    tokenizer,
    items: Sequence[MCItem],
    *,
    max_length: int | None = None,
    batch_size: int | None = None,
) -> list[MCResult]:
    """Fast path with the same results as `score_one_by_one` (to float rounding):
    `batch_size` items per forward pass, longest contexts first. The default is 1 on
    CPU, where a batch only adds padding to compute-bound matmuls, and 8 elsewhere."""
    max_length = max_length_of(model, tokenizer, max_length)
    if batch_size is None:
        batch_size = 1 if model_device(model).type == "cpu" else 8
    pad_id = pad_token_id(tokenizer)
    prepared = [_prepare(tokenizer, item, max_length) for item in items]
    order = sorted(range(len(prepared)), key=lambda k: -len(prepared[k].shared))
    scores: dict[int, dict[int, tuple[float, bool]]] = {}
    for start in range(0, len(order), batch_size):
        chunk = [k for k in order[start : start + batch_size] if any(prepared[k].shareable)]
        if chunk:
            scores.update(zip(chunk, _score_batch(model, [prepared[k] for k in chunk], pad_id)))

    results = []
    for k, p in enumerate(prepared):
        scored = [
            scores[k][i] if ok else _score_request(model, *pair, max_length)
            for i, (ok, pair) in enumerate(zip(p.shareable, p.pairs))
        ]
        results.append(_result(p.item, p.pairs, scored, p.shareable.count(False)))
    return results
