"""Greedy generation for chat models (the reply's option letter is read by `scorers.letters`)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from studies.vocabulary import DECODINGS

from ._batch import model_device, pad_batch, pad_token_id
from .prompts import chat_messages, has_chat_template, render_chat, with_system


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
) -> list[str]:
    """Continuations of `prompts`, special tokens stripped: greedy, or with `decoding`
    "model_default" as the model's own generation config says (a study that ran each
    model with its defaults). `chat=None` uses the chat template when the tokenizer has one.
    `add_special_tokens`: the tokenizer adds its own (a BOS) to each prompt, as for a plain prompt
    that no chat template rendered."""
    if decoding not in DECODINGS:
        raise ValueError(f"decoding must be one of {DECODINGS}, not {decoding!r}")
    greedy = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None} if decoding == "greedy" else {}
    if chat is None:
        chat = has_chat_template(tokenizer)
    texts = [chat_prompt(tokenizer, p, system) if chat else p for p in prompts]
    device = model_device(model)
    pad_id = pad_token_id(tokenizer)
    replies: list[str] = []
    for start in range(0, len(texts), batch_size):
        # A rendered chat text already holds its special tokens, so none are added unless asked.
        encoded = [tokenizer.encode(t, add_special_tokens=add_special_tokens)
                   for t in texts[start : start + batch_size]]
        ids, mask = pad_batch(encoded, pad_id, device, left=True)
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            pad_token_id=pad_id,
            **greedy,
        )
        replies += tokenizer.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True)
    return replies


# --- option letters ------------------------------------------------------------------
