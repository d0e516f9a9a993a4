"""Times the shared-context fast path against the one-by-one reference on response
selection items built from the BotChat/MuTual seeds (about 200-token contexts, four
candidate next utterances). Not collected by pytest; run it by hand:

    HB_MODEL_CACHE=~/.cache/humanbaseline/models python -m tests.scorers.bench_fast_path [n_items [repeats]]
"""

import json
import os
import sys
import time
from pathlib import Path

from modeleval.scorers import prompts
from modeleval.scorers.loading import load_model
from modeleval.scorers.loglikelihood import MCItem, encode_pair, score_one_by_one, score_shared_context

SEEDS = Path(os.environ.get("HB_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
SEEDS = SEEDS / "botchat" / "mutual_test.jsonl"
INSTRUCTION = "Read the dialogue between two speakers and choose the most fitting next utterance."


def items(tokenizer, n: int, target_tokens: int = 200) -> list[MCItem]:
    dialogues = [json.loads(line)["utterances"] for line in SEEDS.read_text().splitlines()]
    dialogues = [d for d in dialogues if len(d) >= 5]
    out = []
    for k, turns in enumerate(dialogues):
        history, answer = turns[:-1], turns[-1]
        text = prompts.render_dialogue({"speaker": f"speaker{1 + i % 2}", "text": t} for i, t in enumerate(history))
        context = prompts.MC_LOGLIK_EN.format(
            instruction=INSTRUCTION, dialogue=text, question="What does the next speaker say?"
        )
        if not 0.7 * target_tokens <= len(tokenizer.encode(context)) <= 1.3 * target_tokens:
            continue
        negatives = [dialogues[(k + j * 37) % len(dialogues)][-1] for j in (1, 2, 3)]
        out.append(MCItem(context, (answer, *negatives)))
        if len(out) == n:
            break
    return out


def main(n: int = 20, repeats: int = 2) -> None:
    if not SEEDS.is_file():
        sys.exit(f"{SEEDS} not found: set HB_SHARED_DATA to the folder holding botchat/")
    start = time.perf_counter()
    model, tokenizer, info = load_model()
    print(f"load {time.perf_counter() - start:.1f} s (converted={info.converted})")
    batch = items(tokenizer, n)
    tokens = sum(
        len(ctx) + len(cont)
        for item in batch
        for ctx, cont in (encode_pair(tokenizer, c, k) for c, k in item.requests())
    )
    ctx_tokens = sum(len(encode_pair(tokenizer, item.context, "x")[0]) for item in batch) / len(batch)
    print(f"{len(batch)} items, mean context {ctx_tokens:.0f} tokens, {tokens} request tokens")
    score_shared_context(model, tokenizer, batch[:2])  # warm-up
    # Best of `repeats` interleaved runs, wall and process CPU time: on a shared
    # machine the CPU seconds are the steadier figure.
    runs = {
        "one_by_one": lambda: score_one_by_one(model, tokenizer, batch),
        "shared_bs1": lambda: score_shared_context(model, tokenizer, batch, batch_size=1),
        "shared_bs8": lambda: score_shared_context(model, tokenizer, batch, batch_size=8),
    }
    timings = {}
    for _ in range(repeats):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            results = run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best = timings.get(name, (float("inf"), float("inf"), None))
            timings[name] = (min(wall, best[0]), min(cpu, best[1]), results)
    for name, (wall, cpu, _) in timings.items():
        rates = f"{len(batch) / wall:5.2f} items/s  {tokens / wall:6.0f} request tokens/s"
        print(f"{name:11s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  {rates}")
    ref = timings["one_by_one"][2]
    for name in ("shared_bs1", "shared_bs8"):
        diff = max(
            abs(a.logprob - b.logprob) for x, y in zip(ref, timings[name][2], strict=True)
            for a, b in zip(x.options, y.options, strict=True)
        )
        print(f"{name}: max |logprob difference| vs one_by_one {diff:.2e}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
