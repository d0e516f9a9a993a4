"""Training throughput: the training run's step loop versus a plain `transformers.Trainer`.

    python perf/training_vs_trainer.py [--examples 160] [--layers 2] [--max-length 64] [--threads 1] [--rounds 3]
        [--steps-per-chunk 20]
    python perf/training_vs_trainer.py --examples 16 --layers 1 --max-length 16 --rounds 1   # tiny: does it run

Both sides train the same classification head on the packaged SmolLM2-135M (its first `--layers`
blocks, float32, CPU, the same torch thread count) on the same DiQAD-shaped examples, rendered as
DiQAD does, with the same settings: batch 16, AdamW at 1e-5 with weight decay 0.01 (torch's fused kernel
on both sides, Trainer's default), gradients clipped at 1.0, a constant learning rate, one epoch,
inputs cut from the left to `--max-length`:

* ours: `modeleval.scorers.classifier.train_step` over the batches in order, as a training run's
  chunks run them (tokenised per batch, padded to the batch's longest), with the checkpoints the run
  writes where it writes them: one at each chunk's end (`--steps-per-chunk`, the run's default 20),
  each with the weights, tokenizer and optimiser moments for the next chunk to go on from, the last
  one with the weights and tokenizer alone (nothing trains on from it; its weights are the result);
* Trainer: `transformers.Trainer` on the same examples (pre-tokenised, padded per batch by
  `DataCollatorWithPadding`, no evaluation, no logging), then `save_model` for the result: the
  trained weights and the tokenizer, as a run of this recipe keeps them.

The sides take turns `--rounds` times (default 3), the order swapped each round, so a busy neighbour on the
shared cores slows both alike; each round is printed as it ends, and the ratio given is the median of the rounds'
ratios. Prints a markdown section for perf/RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SETTINGS = {"learning_rate": 1e-5, "batch_size": 16, "max_grad_norm": 1.0, "weight_decay": 0.01}
LABELS = ["0", "1", "2"]


def examples(n, seed=0):
    from modeleval.scorers.classifier import render_dialogue

    rng = random.Random(seed)
    words = ["the", "car", "rent", "tax", "court", "deposit", "brake", "engine", "refund", "contract", "lawyer", "bank",
             "loan", "fee"]
    rows = []
    for _ in range(n):
        turns = [{"speaker": "user" if t % 2 == 0 else "expert",
                  "text": " ".join(rng.choice(words) for _ in range(rng.randint(8, 30)))} for t in range(4)]
        rows.append((render_dialogue(turns), rng.randrange(3)))
    return rows


def ours(base, rows, args):
    from modeleval.scorers import classifier

    model, tokenizer = classifier.new_classifier(base, LABELS, seed=0, layers=args.layers)
    optimizer = classifier.optimizer_for(model, SETTINGS)
    settings = {**SETTINGS, "max_length": args.max_length}
    size = SETTINGS["batch_size"]
    steps = range(0, len(rows), size)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        for step, first in enumerate(steps):
            batch = rows[first:first + size]
            classifier.train_step(model, optimizer, tokenizer, [t for t, _ in batch], [y for _, y in batch], settings,
                                  seed=step)
            last = step == len(steps) - 1
            if last or (step + 1) % args.steps_per_chunk == 0:  # a chunk's end (modeleval.training.train_chunk)
                classifier.save_checkpoint(Path(folder) / f"chunk-{step}", model, tokenizer,
                                           None if last else optimizer, {})
        return time.perf_counter() - start


def trainer(base, rows, args):
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from modeleval.scorers import classifier

    model, tokenizer = classifier.new_classifier(base, LABELS, seed=0, layers=args.layers)
    data = [{**tokenizer(text, truncation=True, max_length=args.max_length), "label": label} for text, label in rows]
    with tempfile.TemporaryDirectory() as out:
        training_args = TrainingArguments(
            output_dir=out, per_device_train_batch_size=SETTINGS["batch_size"], learning_rate=SETTINGS["learning_rate"],
            weight_decay=SETTINGS["weight_decay"], max_grad_norm=SETTINGS["max_grad_norm"], num_train_epochs=1,
            lr_scheduler_type="constant", save_strategy="no", eval_strategy="no", report_to=[], logging_strategy="no",
            use_cpu=True, seed=0, dataloader_num_workers=0, disable_tqdm=True,
            optim="adamw_torch_fused")
        run = Trainer(model=model, args=training_args, train_dataset=data, processing_class=tokenizer,
                      data_collator=DataCollatorWithPadding(tokenizer))
        start = time.perf_counter()
        run.train()
        run.save_model(str(Path(out) / "result"))
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=160)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps-per-chunk", type=int, default=20, help="the training run's default")
    args = parser.parse_args()

    import torch

    from modeleval.scorers import loading

    torch.set_num_threads(args.threads)
    # The folder a training run reads the base checkpoint from (modeleval.training.base_folder), with the GGUF
    # converted on first use. load_model, not get_model: no process-wide cached copy stays in memory beside the
    # two sides' models.
    base = loading.load_model("packaged").info.loaded_from
    rows = examples(args.examples)
    rounds = []
    for n in range(1, args.rounds + 1):
        # The order swaps every round (ours first in odd rounds), so that a busy neighbour slows both alike.
        timed = {}
        for side in (("ours", "Trainer") if n % 2 else ("Trainer", "ours")):
            timed[side] = (ours if side == "ours" else trainer)(base, rows, args)
        timed["ratio"] = timed["Trainer"] / timed["ours"]  # our speed over Trainer's
        timed["load"] = os.getloadavg()[0]
        print(f"round {n}: ours {timed['ours']:.2f} s, Trainer {timed['Trainer']:.2f} s, "
              f"ours / Trainer speed {timed['ratio']:.2f}, load {timed['load']:.2f}", flush=True)
        rounds.append(timed)
    median = {key: statistics.median(r[key] for r in rounds) for key in ("ours", "Trainer", "ratio")}
    import transformers

    command = " ".join(["python perf/training_vs_trainer.py", *sys.argv[1:]])
    table = "\n".join(f"| {n} | {r['ours']:.2f} | {r['Trainer']:.2f} | {r['ratio']:.2f} | {r['load']:.2f} |"
                      for n, r in enumerate(rounds, start=1))
    print(f"""
## Training throughput: the training run's loop versus transformers.Trainer

{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, `{command}` on {processor()}
({os.cpu_count()} cores, shared), torch {torch.__version__}, transformers {transformers.__version__},
{args.threads} thread(s); packaged SmolLM2-135M, first {args.layers} blocks, {args.examples} examples, max length
{args.max_length}, batch 16, AdamW 1e-5 (fused kernel on both sides), clipping 1.0, one epoch; {args.rounds}
rounds, the order swapped each round. Ours writes a checkpoint at each chunk's end ({args.steps_per_chunk} steps a
chunk; the optimiser moments in all but the last), Trainer its trained weights and tokenizer at the end.

| round | ours (s, `classifier.train_step` loop + the run's checkpoints) | `transformers.Trainer` (s, train + save_model) | speed, ours / Trainer | load (1 min) |
| --- | --- | --- | --- | --- |
{table}

Median: ours {median['ours']:.2f} s ({args.examples / median['ours']:.2f} examples/s), Trainer
{median['Trainer']:.2f} s ({args.examples / median['Trainer']:.2f} examples/s); median speed ratio
{median['ratio']:.2f}x Trainer's. Load average at the end: {" ".join(f"{x:.2f}" for x in os.getloadavg())}.
""")  # noqa: E501 -- the printed table's header is one line


def processor():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


if __name__ == "__main__":
    main()
