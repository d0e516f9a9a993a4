"""lm-evaluation-harness side of perf/scoring_vs_lm_eval.py; runs in the lm-eval venv.

    perf/.envs/lmeval/bin/python perf/_lm_eval_worker.py --model FOLDER --threads 2 --batch-size 1

Standard library, torch, psutil, lm_eval and perf/_rss.py only: the project itself is not
importable in that venv. The model loads once; then each line read on stdin names a JSON file of
{"requests": [[context, continuation], ...], "warmup": bool}, which is scored with
`HFLM.loglikelihood` and answered with a JSON file next to it (same name + ".out") holding
the results, the scoring time and the memory figures, and one line on the protocol pipe.
An empty line or end of input stops the worker.

The protocol goes to the original stdout; stdout itself is pointed at stderr first, so
nothing lm-eval or transformers print can be mistaken for an answer.
"""

import argparse
import json
import os
import sys
import time

from _rss import PeakRSS, max_rss_bytes  # beside this file: the script's folder is on sys.path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--batch-size", type=int, default=1)
    args = parser.parse_args()

    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    import torch

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    from lm_eval import __version__ as lm_eval_version
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=args.model, dtype="float32", device="cpu", batch_size=args.batch_size)
    load_s = time.perf_counter() - started
    ready = {
        "ready": True,
        "load_s": load_s,
        "rss_after_load": PeakRSS().process.memory_info().rss,
        "lm_eval": lm_eval_version,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "batch_size": args.batch_size,
        "max_length": lm.max_length,
    }
    protocol.write(json.dumps(ready) + "\n")

    for line in sys.stdin:
        path = line.strip()
        if not path:
            break
        with open(path) as handle:
            job = json.load(handle)
        instances = [
            Instance(request_type="loglikelihood", doc={}, arguments=(context, continuation), idx=i)
            for i, (context, continuation) in enumerate(job["requests"])
        ]
        with PeakRSS() as rss:
            wall, cpu = time.perf_counter(), time.process_time()
            results = lm.loglikelihood(instances, disable_tqdm=True)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        answer = {
            "results": [[float(logprob), bool(greedy)] for logprob, greedy in results],
            "wall_s": wall,
            "cpu_s": cpu,
            "rss_before": rss.before,
            "rss_peak": rss.peak,
            "max_rss": max_rss_bytes(),
        }
        with open(path + ".out", "w") as handle:
            json.dump(answer, handle)
        protocol.write(json.dumps({"done": path}) + "\n")


if __name__ == "__main__":
    main()
