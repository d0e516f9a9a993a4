"""Greedy generation for chat models (the reply's option letter is read by `scorers.letters`).

Prompts that share a long start (a study's chat with its fixed examples, a judge's rubric) have that
start read once per call: its keys and values are computed once and every batch generates on top of
them, so each prompt's own tokens are all that is read again.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from studies.vocabulary import DECODINGS

from ._batch import model_device, pad_batch, pad_token_id
from .prompts import chat_messages, has_chat_template, render_chat, with_system

# A start that all the prompts of a call share is read once only when it is at least this long.
MIN_SHARED_TOKENS = 32


def shared_start(encoded: Sequence[Sequence[int]]) -> int:
    """Tokens every prompt starts with, leaving each at least its last token (whose logits give the
    first new token)."""
    n = min(len(e) for e in encoded) - 1
    first = encoded[0]
    return next((j for j in range(n) if any(e[j] != first[j] for e in encoded[1:])), max(n, 0))


def _start_cache(model, tokens: list[int]):
    """The keys and values of `tokens`, read once."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    model(input_ids=torch.tensor([tokens], device=model_device(model)), past_key_values=cache, use_cache=True,
          logits_to_keep=1)
    return [(layer.keys, layer.values) for layer in cache.layers]


def _can_share_start(model) -> bool:
    # Only the plain cache of full attention: a sliding window or a recurrent state is no prefix to reuse.
    config = model.config
    types = getattr(config, "layer_types", None) or []
    return getattr(config, "sliding_window", None) is None and all(t == "full_attention" for t in types)


def chat_prompt(tokenizer, user: str, system: str | None = None) -> str:
    """The prompt text as the model's chat template renders one user turn.
    Without `system`, the template's own default (if any) applies."""
    return render_chat(tokenizer, with_system(system, chat_messages(user)))


@torch.inference_mode()
def generate(
    model,
    tokenizer,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 32,
    chat: bool | None = None,
    system: str | None = None,
    batch_size: int = 8,
    decoding: str = "greedy",
    add_special_tokens: bool = False,
    share_start: bool = True,
) -> list[str]:
    """Continuations of `prompts`, special tokens stripped: greedy, or with `decoding`
    "model_default" as the model's own generation config says (a study that ran each
    model with its defaults). `chat=None` uses the chat template when the tokenizer has one.
    `add_special_tokens`: the tokenizer adds its own (a BOS) to each prompt, as for a plain prompt
    that no chat template rendered. `share_start`: a start all the prompts share (MIN_SHARED_TOKENS
    or more) is read once, and each batch generates on its keys and values."""
    if decoding not in DECODINGS:
        raise ValueError(f"decoding must be one of {DECODINGS}, not {decoding!r}")
    greedy = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None} if decoding == "greedy" else {}
    if chat is None:
        chat = has_chat_template(tokenizer)
    texts = [chat_prompt(tokenizer, p, system) if chat else p for p in prompts]
    device = model_device(model)
    pad_id = pad_token_id(tokenizer)
    replies: list[str] = []
    # A rendered chat text already holds its special tokens, so none are added unless asked.
    encoded = [tokenizer.encode(t, add_special_tokens=add_special_tokens) for t in texts]
    shared = shared_start(encoded) if share_start and len(encoded) > 1 and _can_share_start(model) else 0
    start_ids, start_kv = [], None
    if shared >= MIN_SHARED_TOKENS:
        start_ids = encoded[0][:shared]
        start_kv = _start_cache(model, start_ids)
    for start in range(0, len(texts), batch_size):
        batch = encoded[start : start + batch_size]
        rows = len(batch)
        ids, mask = pad_batch([e[len(start_ids):] for e in batch], pad_id, device, left=True)
        cache = None
        if start_kv is not None:
            from transformers import DynamicCache

            # The shared start, then each prompt's own tokens padded on the left: the padding sits between
            # them, masked, and the positions (from the mask) continue the start's in every row.
            ids = torch.cat([torch.tensor([start_ids], device=device).expand(rows, -1), ids], dim=1)
            mask = torch.cat([torch.ones((rows, len(start_ids)), dtype=mask.dtype, device=device), mask], dim=1)
            cache = DynamicCache([(k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1)) for k, v in start_kv],
                                 config=model.config)
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            pad_token_id=pad_id,
            past_key_values=cache,
            **greedy,
        )
        replies += tokenizer.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True)
    return replies


# --- option letters ------------------------------------------------------------------
