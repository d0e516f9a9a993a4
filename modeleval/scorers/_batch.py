"""Padded batches. Scoring pads on the right: no query row is ever fully masked
(left padding causes that, and it can put NaN into padded positions), and the last
real position of each row is picked out explicitly. Generation pads on the left, so
every row ends at the same column."""

from __future__ import annotations

from typing import Sequence

import torch


def model_device(model) -> torch.device:
    return next(model.parameters()).device


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int, device, *, left: bool = False):
    """(ids, mask) of shape (len(seqs), longest), real tokens first unless `left`."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((len(seqs), width), dtype=torch.long, device=device)
    for row, seq in enumerate(seqs):
        span = slice(width - len(seq), width) if left else slice(0, len(seq))
        ids[row, span] = torch.tensor(seq, dtype=torch.long, device=device)
        mask[row, span] = 1
    return ids, mask


@torch.inference_mode()
def last_logits(model, seqs: Sequence[Sequence[int]], pad_id: int, *, use_cache: bool = False):
    """Next-token logits after each sequence, (B, vocab), and the model output
    (whose cache, with use_cache, holds the padded rows) and the padding mask."""
    device = model_device(model)
    ids, mask = pad_batch(seqs, pad_id, device)
    last = mask.sum(dim=1) - 1
    # Only the rows' last positions need vocabulary logits: the projection onto the
    # vocabulary is a large share of the cost for a small model.
    keep, where = torch.unique(last, return_inverse=True)
    out = model(input_ids=ids, attention_mask=mask, use_cache=use_cache, logits_to_keep=keep)
    return out.logits[torch.arange(len(seqs), device=device), where], out, mask


def pad_token_id(tokenizer) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.bos_token_id):
        if value is not None:
            return value
    return 0
