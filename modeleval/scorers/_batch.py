"""Padded batches. Generation pads on the left, so every row ends at the same
column; scoring packs its own rows (see loglikelihood)."""

from __future__ import annotations

from collections.abc import Sequence

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


def pad_token_id(tokenizer) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.bos_token_id):
        if value is not None:
            return value
    return 0
