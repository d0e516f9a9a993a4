"""Training runs: a classifier trained on accepted final labels, DiQAD's supervised baseline.

A training run is an EvalRun in mode `train`. Its split (train / validation / test item ids,
seeded and stratified) is stored in `selection["split"]`; its chunks are slices of optimiser steps
that run one after the other on the `gpu` queue (each enqueues the next when it completes). Every
chunk starts from the checkpoint the previous chunk saved under the model cache and saves its own,
so a chunk whose worker died is redone from the same checkpoint with the same seed and batches,
and the run ends with the weights an uninterrupted run would have. Validation accuracy is measured
at each epoch's end; the last chunk registers the best epoch's weights as a ModelSpec and starts a
`classify` run on the test split, which reports read like any other run.
"""
from __future__ import annotations

import math
import random
from pathlib import Path

from django.conf import settings as django_settings

from benchmarks.formschema import question, rating_scale
from benchmarks.models import Item

from . import bounds
from .scorers import loading

# DiQAD's recipe (section 5.1): cross-entropy, AdamW, learning rate 1e-5, batch 16, gradients clipped
# at 1.0, up to 10 epochs, the best checkpoint by validation accuracy; test and validation 10% each
# (10,000 of 100,000 dialogues). What the paper leaves unstated is a setting of ours.
DEFAULTS = {
    "question": "",  # empty: the task's primary question
    "learning_rate": 1e-5,
    "batch_size": 16,
    "max_grad_norm": 1.0,
    "epochs": 10,
    "weight_decay": 0.01,  # torch's AdamW default; DiQAD does not say
    "max_length": None,  # tokens, truncated from the left; empty: the model's own length
    "validation": 0.1,  # a share of the labelled items, or a number of items
    "test": 0.1,
    "holdout_domain": "",  # leave-one-domain-out: this domain's items are the test split
    "include_checked": False,  # QC-sample and gold-panel items may be trained on
    "layers": None,  # keep only the base model's first N transformer blocks; empty: all
    "steps_per_chunk": 20,
}


SYNC_WORKER = "sync@"  # runner.run_sync's worker name: the classify run is then left for run_sync too


class TrainingError(ValueError):
    pass


def resolve(given) -> dict:
    given = dict(given or {})
    if unknown := sorted(set(given) - set(DEFAULTS)):
        raise TrainingError(f"unknown training settings {unknown}; expected {sorted(DEFAULTS)}")
    resolved = {**DEFAULTS, **given}
    for key in ("batch_size", "epochs", "steps_per_chunk"):
        if isinstance(resolved[key], bool) or not isinstance(resolved[key], int) or resolved[key] < 1:
            raise TrainingError(f"{key} must be a positive integer, got {resolved[key]!r}")
    for key in ("learning_rate", "max_grad_norm"):
        if isinstance(resolved[key], bool) or not isinstance(resolved[key], (int, float)) or resolved[key] <= 0:
            raise TrainingError(f"{key} must be a positive number, got {resolved[key]!r}")
    for key in ("max_length", "layers"):
        value = resolved[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise TrainingError(f"{key} must be empty or a positive integer, got {value!r}")
    bounds.check(resolved, bounds.TRAINING)
    return resolved


def labels_of(task, key) -> list[str]:
    """The classes: the question's numeric values in rising order (exclusion codes left out)."""
    values = rating_scale(question(task.form, key))
    if values is None:
        raise TrainingError(f"task {task}: {key!r} is neither a scale nor a numeric choice")
    return [str(v) for v in values]


def _size(value, total, name):
    if isinstance(value, float) and 0 < value < 1:
        return max(1, round(value * total))
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < total:
        return value
    raise TrainingError(f"{name} must be a share between 0 and 1 or a number of items below {total}, got {value!r}")


def draw_split(labelled: dict, domains: dict, settings: dict, seed: int) -> dict:
    """{train, validation, test: [item ids], held_out_checked: [...]} from {item id: (label, checked)}.
    Stratified by label and seeded (scikit-learn's train_test_split). Checked items (QC samples, gold
    panels) never enter train or validation unless `include_checked`; with `holdout_domain` the test
    split is that domain's items and nothing of it is trained on."""
    from sklearn.model_selection import train_test_split

    ids = sorted(labelled)
    if settings["holdout_domain"]:
        test = [i for i in ids if domains.get(i) == settings["holdout_domain"]]
        if not test:
            raise TrainingError(f"no labelled item has domain {settings['holdout_domain']!r}")
        rest = [i for i in ids if domains.get(i) != settings["holdout_domain"]]
    else:
        try:
            rest, test = train_test_split(ids, test_size=_size(settings["test"], len(ids), "test"),
                                          random_state=seed, stratify=[labelled[i][0] for i in ids])
        except ValueError as error:
            raise TrainingError(f"cannot draw a stratified test split from {len(ids)} items: {error}") from None
    held_out = sorted(i for i in rest if labelled[i][1] and not settings["include_checked"])
    rest = [i for i in rest if i not in set(held_out)]
    validation_size = _size(settings["validation"], len(rest), "validation") if settings["validation"] else 0
    if validation_size:
        try:
            train, validation = train_test_split(rest, test_size=validation_size, random_state=seed,
                                                 stratify=[labelled[i][0] for i in rest])
        except ValueError as error:
            raise TrainingError(f"cannot draw a stratified validation split from {len(rest)} items: {error}") from None
    else:
        train, validation = rest, []
    if not train:
        raise TrainingError("no items left to train on")
    return {"train": sorted(train), "validation": sorted(validation), "test": sorted(test),
            "held_out_checked": held_out}


def plan(split: dict, settings: dict, seed: int) -> list[dict]:
    """The chunks: [{epoch, first_step, ids}] with `ids` the training examples of the chunk's steps in
    order. Each epoch shuffles the training items with its own seed; a chunk never spans two epochs,
    so that validation falls at a chunk's end."""
    size, per_chunk = settings["batch_size"], settings["steps_per_chunk"]
    steps_per_epoch = math.ceil(len(split["train"]) / size)
    chunks, step = [], 0
    for epoch in range(settings["epochs"]):
        order = list(split["train"])
        random.Random(f"{seed}:{epoch}").shuffle(order)
        for first in range(0, steps_per_epoch, per_chunk):
            steps = min(per_chunk, steps_per_epoch - first)
            chunks.append({"epoch": epoch, "first_step": step, "ids": order[first * size:(first + steps) * size],
                           "ends_epoch": first + steps == steps_per_epoch})
            step += steps
    return chunks


def checkpoint_dir(run, index) -> Path:
    return Path(django_settings.MODEL_CACHE_DIR) / "trained" / f"run-{run.pk}" / f"chunk-{index:05d}"


def base_folder(spec) -> str:
    """The base model's dense checkpoint folder (a GGUF is converted once into the model cache)."""
    from .inference import PermanentError

    path = loading.resolve_source(spec.source)
    sha = loading.file_sha256(path) if path.is_file() else loading.folder_sha256(path)
    if sha != spec.sha256:
        raise PermanentError(f"model {spec.name}: {path} has sha256 {sha}, registered as {spec.sha256}")
    if path.is_dir():
        return str(path)
    return loading.get_model(spec.source, cache_dir=django_settings.MODEL_CACHE_DIR).info.loaded_from


def _texts(ids):
    from .scorers.classifier import render_dialogue

    items = Item.objects.in_bulk(ids)
    return [render_dialogue(items[i].dialogue) for i in ids]


def _targets(run, ids):
    labels, values = run.settings["labels"], run.selection["labels"]
    return [labels.index(values[str(i)]) for i in ids]


def train_chunk(run, chunk) -> list:
    """The chunk's optimiser steps from the previous chunk's checkpoint, with a `step` event each; at
    an epoch's end the validation accuracy; the chunk's checkpoint (with its hash). Returns no
    predictions: the test split is scored by the `classify` run that the last chunk starts."""
    from .lifecycle import record
    from .models import EvalRun, RunEventKind, RunState
    from .scorers import classifier

    s = run.settings
    steps = plan(run.selection["split"], s, run.seed)
    part = steps[chunk.index]
    if chunk.index == 0:
        model, tokenizer = classifier.new_classifier(base_folder(run.model), s["labels"], seed=run.seed,
                                                     layers=s["layers"])
        optimizer = classifier.optimizer_for(model, s)
        state = {"validation": []}
    else:
        model, tokenizer, optimizer, state = classifier.load_checkpoint(checkpoint_dir(run, chunk.index - 1), s)
    size, ids = s["batch_size"], part["ids"]
    texts, targets = _texts(ids), _targets(run, ids)  # the chunk's examples in one query, not one a step
    for n, start in enumerate(range(0, len(ids), size)):
        if EvalRun.objects.filter(pk=run.pk, state=RunState.CANCELLED).exists():
            return []  # cancelled: the run stays as it is, this chunk saves nothing
        batch = slice(start, start + size)
        step = part["first_step"] + n
        result = classifier.train_step(model, optimizer, tokenizer, texts[batch], targets[batch], s,
                                       seed=run.seed * 1_000_003 + step)
        record(run, RunEventKind.STEP, chunk=chunk, step=step + 1, epoch=part["epoch"] + 1, examples=len(texts[batch]),
               loss=result.loss, grad_norm=result.grad_norm)
    if part["ends_epoch"] and run.selection["split"]["validation"]:
        accuracy = evaluate(model, tokenizer, run, run.selection["split"]["validation"])
        state["validation"].append({"epoch": part["epoch"] + 1, "chunk": chunk.index, "accuracy": accuracy})
        record(run, RunEventKind.VALIDATION, chunk=chunk, epoch=part["epoch"] + 1, accuracy=accuracy)
    folder = checkpoint_dir(run, chunk.index)
    # The next chunk goes on from this checkpoint with its optimiser moments; after the last chunk only the
    # weights are read (the best epoch's become the run's model), so the last one keeps no moments.
    moments = optimizer if chunk.index < len(steps) - 1 else None
    if not folder.is_dir():
        loading.save_atomically(folder, lambda tmp: classifier.save_checkpoint(tmp, model, tokenizer, moments,
                                                                              state))
    record(run, RunEventKind.CHECKPOINT, chunk=chunk, path=str(folder),
           sha256=loading.folder_sha256(folder / classifier.MODEL_FOLDER))
    return []


def evaluate(model, tokenizer, run, ids) -> float:
    from .scorers.classifier import predict

    probs = predict(model, tokenizer, _texts(ids), max_length=run.settings["max_length"])
    targets = _targets(run, ids)
    return sum(max(range(len(p)), key=p.__getitem__) == t for p, t in zip(probs, targets, strict=True)) / len(ids)


def best_chunk(run) -> int:
    """The chunk whose checkpoint had the best validation accuracy (the earlier one on ties), read from
    the run's validation events, or the last chunk when there is no validation split."""
    from .models import RunEvent, RunEventKind

    scored = [(e.figures["accuracy"], -e.chunk.index) for e in
              RunEvent.objects.filter(run=run, kind=RunEventKind.VALIDATION).select_related("chunk")]
    return -max(scored)[1] if scored else run.chunks_total - 1
