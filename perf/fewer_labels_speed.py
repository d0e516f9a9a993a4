"""How long the statistics of fewer-labels take at scale: Dawid-Skene (and its one-coin form, MACE as published and
MACE fitted by EM to its maximum) on 100,000 items x 3 labels, and a PPI++ interval with 100,000 judge answers, in one
process.

Synthetic data, seeded: 3 labels per item from a pool of 60 annotators of competence 0.55 to 0.95 over 3
classes; a judge that agrees with the truth 85% of the time; 2,000 of the 100,000 items labelled by people.
Each is timed `--repeat` times (the first call of ppi-python pays numba's and the imports' start-up, reported
apart) and the median is printed.

    python perf/fewer_labels_speed.py [--items 100000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def answers(n_items, per_item=3, n_annotators=60, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_classes, n_items)
    competence = np.linspace(0.55, 0.95, n_annotators)
    who = np.stack([rng.choice(n_annotators, per_item, replace=False) for _ in range(n_items)])
    right = rng.random(who.shape) < competence[who]
    noise = (truth[:, None] + rng.integers(1, n_classes, who.shape)) % n_classes
    given = np.where(right, truth[:, None], noise)
    items = np.repeat(np.arange(n_items), per_item)
    return list(zip(items.tolist(), who.ravel().tolist(), given.ravel().tolist(), strict=True)), truth


def timed(function, repeat, cpu=None):
    """`repeat` wall times of `function()` (and, into `cpu` when given, its process CPU seconds: the figure a
    loaded machine hardly changes)."""
    times = []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = function()
        times.append(time.perf_counter() - started)
        if cpu is not None:
            cpu.append(time.process_time() - started_cpu)
    return result, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--labelled", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from metrics.aggregation import dawid_skene, mace, mace_em
    from metrics.prediction_powered import plan_labels, ppi_mean

    rows, truth = answers(args.items)
    print(f"{args.items:,} items x 3 labels ({len(rows):,} answers), 60 annotators, 3 classes")
    for name, fit in (("Dawid-Skene", lambda: dawid_skene(rows)),
                      ("one-coin Dawid-Skene", lambda: dawid_skene(rows, one_coin=True)),
                      ("MACE (as published)", lambda: mace(rows)),
                      ("MACE, EM to its maximum", lambda: mace_em(rows))):
        cpu = []
        model, times = timed(fit, args.repeat, cpu)
        accuracy = np.mean(np.array(model.aggregate) == truth[np.array(model.items)])
        print(f"{name:>22}: median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f}), "
              f"CPU median {statistics.median(cpu):.3f} s; "
              f"{model.iterations} iterations, converged {model.converged}, aggregate accuracy {accuracy:.4f}")
    rng = np.random.default_rng(1)
    y_all = (rng.random(args.items) < 0.7).astype(float)
    f_all = np.where(rng.random(args.items) < 0.85, y_all, 1 - y_all)
    labelled = rng.choice(args.items, args.labelled, replace=False)
    y, f = y_all[labelled], f_all[labelled]
    f_unl = np.delete(f_all, labelled)  # the judge-only items: a labelled item is never among them
    started = time.perf_counter()
    ppi_mean(y, f, f_unl, confidence=0.95)
    first = time.perf_counter() - started
    result, times = timed(lambda: ppi_mean(y, f, f_unl, confidence=0.95), args.repeat)
    print(f"{'PPI++ mean interval':>22}: median {statistics.median(times):.4f} s (first call {first:.3f} s, with "
          f"ppi-python's import); n {result.n:,}, N {result.N:,}, lambda {result.lam:.3f}, width "
          f"{result.human_anchored.width:.4f} against {result.classical.width:.4f} classical")
    plan, times = timed(lambda: plan_labels(y, f, f_unl, target_width=0.02, confidence=0.95), args.repeat)
    print(f"{'planner':>22}: median {statistics.median(times):.4f} s; {plan.n_needed} labels for width 0.02 "
          f"({plan.classical_n_needed} classical)")


if __name__ == "__main__":
    main()
