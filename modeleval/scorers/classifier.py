"""A sequence-classification head on a local causal checkpoint, trained with DiQAD's supervised
recipe (cross-entropy, AdamW, gradient clipping) and read back as a label per dialogue.

No Django here: the run's bookkeeping is in `modeleval.training`. Every step is a function of the
checkpoint it starts from, the seed and the examples it is given, so a chunk redone from its first
checkpoint ends with the same weights as the first time.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

STATE_FILE = "training_state.json"
OPTIMIZER_FILE = "optimizer.pt"
MODEL_FOLDER = "model"  # the weights and tokenizer alone: what a ModelSpec points at and hashes


def render_dialogue(turns: Sequence[dict]) -> str:
    """DiQAD's input: the utterances spliced in order, the user's with "question:", the expert's with
    "response:" (the first speaker is the user, as in DiQAD's user-expert dialogues)."""
    first = turns[0]["speaker"] if turns else None
    return "".join(f"{'question:' if t['speaker'] == first else 'response:'}{t['text']}" for t in turns)


def tokenizer_for_training(tokenizer):
    """Truncated from the left (the end of the dialogue is kept), padded on the right with a pad token."""
    tokenizer.truncation_side = "left"
    tokenizer.padding_side = "right"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def encode(tokenizer, texts, max_length):
    return tokenizer(list(texts), truncation=True, max_length=max_length, padding=True, return_tensors="pt")


def new_classifier(base_folder: str, labels: Sequence[str], *, seed: int, layers: int | None = None):
    """The base checkpoint with a freshly initialised head (seeded) for `labels`; with `layers`, only
    its first `layers` transformer blocks are kept (a smaller model, a setting of the run)."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = tokenizer_for_training(AutoTokenizer.from_pretrained(base_folder))
    config = AutoConfig.from_pretrained(base_folder, num_labels=len(labels),
                                        id2label=dict(enumerate(labels)), label2id={v: i for i, v in enumerate(labels)})
    if layers:
        config.num_hidden_layers = layers
    config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(base_folder, config=config, dtype=torch.float32)
    return model, tokenizer


def load_classifier(folder: str | Path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = tokenizer_for_training(AutoTokenizer.from_pretrained(folder))
    model = AutoModelForSequenceClassification.from_pretrained(folder)
    model.eval()
    return model, tokenizer


def optimizer_for(model, settings):
    import torch

    # The fused kernel (transformers.Trainer's default since torch 2.8): one pass over each parameter instead of a
    # chain of elementwise ops. On CPU the optimiser step is about 4x faster (0.5 s against 2.2 s over ten steps of
    # a 2-block model, whose embedding's 28M weights it updates in full each step; perf/RESULTS.md). The same AdamW:
    # it differs from the unfused loop by float rounding only (1.2e-7 at most after a few steps), and it is
    # deterministic, so a chunk redone from its checkpoint still ends with the same weights bit for bit.
    return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings["learning_rate"],
                             weight_decay=settings["weight_decay"], fused=True)


@dataclass
class StepResult:
    loss: float
    grad_norm: float


def train_step(model, optimizer, tokenizer, texts, targets, settings, *, seed: int) -> StepResult:
    """One optimiser step on one batch: cross-entropy, gradients clipped to `max_grad_norm`."""
    import torch

    torch.manual_seed(seed)  # dropout, where the architecture has any, draws the same masks on a redo
    model.train()
    batch = encode(tokenizer, texts, settings["max_length"])
    # No key-value cache: one pass over whole inputs reads none back (transformers.Trainer turns it off too).
    out = model(**batch, labels=torch.tensor(list(targets)), use_cache=False)
    out.loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), settings["max_grad_norm"])
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return StepResult(float(out.loss.detach()), float(norm))


def predict(model, tokenizer, texts, *, max_length, batch_size=16) -> list[list[float]]:
    """Class probabilities for each text, in order."""
    import torch

    model.eval()
    probs = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = encode(tokenizer, texts[start:start + batch_size], max_length)
            probs += torch.softmax(model(**batch, use_cache=False).logits.float(), dim=-1).tolist()
    return probs


def save_checkpoint(folder: Path, model, tokenizer, optimizer, state: dict) -> None:
    """Weights and tokenizer under `model/` (hashed on their own), the optimiser's moments and the
    training state beside them: all a redo needs to go on exactly where this one stopped. With no
    `optimizer` the moments are left out: where nothing trains on from this checkpoint, they are the
    largest file (twice the weights) and nobody reads them."""
    import torch

    model.save_pretrained(folder / MODEL_FOLDER)
    tokenizer.save_pretrained(folder / MODEL_FOLDER)
    if optimizer is not None:
        torch.save(optimizer.state_dict(), folder / OPTIMIZER_FILE)
    (folder / STATE_FILE).write_text(json.dumps(state, indent=1, sort_keys=True))


def load_checkpoint(folder: Path, settings):
    import torch

    model, tokenizer = load_classifier(folder / MODEL_FOLDER)
    optimizer = optimizer_for(model, settings)
    optimizer.load_state_dict(torch.load(folder / OPTIMIZER_FILE, weights_only=True))
    return model, tokenizer, optimizer, json.loads((folder / STATE_FILE).read_text())
