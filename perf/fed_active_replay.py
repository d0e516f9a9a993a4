"""Active selection replayed on FED: fewer human labels for the same certainty?

The estimand is the mean human Overall rating of FED's 375 turn-level items (each item's rating: the mean of its
five raters). The people's labels are hidden; the packaged model rates every item (the judge, the platform's
`rating` mode, zero-shot, read from the rating tokens' probabilities); a budget of B items is drawn for people to
label, either by active selection (each item with a probability from the judge's uncertainty mixed with uniform,
`metrics.prediction_powered.inclusion_probabilities`, Poisson sampling) or uniformly (B / N each). On the drawn
items the people's labels are revealed, and the mean is estimated with its 95% interval: classical, and
human-anchored (the judge's ratings on all items; active inference's design-based estimate, unbiased under
either draw, `metrics.prediction_powered.active_mean`). Over many seeds: the coverage of the true mean and the mean
width; and how many labels uniform sampling needs for the width active selection reaches with B (labels saved).

The judge's ratings are computed once through the platform (a SQLite database under var/perf/fed-judge/: the
items imported, a `rating` run scored chunk by chunk in this process, resumable) and cached in
var/perf/fed_judge.json; --refresh computes them again.

    python perf/fed_active_replay.py [--seeds 1000] [--budgets 40 60 100 150] [--uniform-share 0.2]
    python perf/fed_active_replay.py --limit 12 --work /tmp/fed-tiny --seeds 20 --budgets 4 6   # tiny: does it run

--limit N rates only the first N turn-level items (a smoke run, cached apart from the full run's ratings);
--work DIR keeps the database and the cache there instead of var/perf.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FED = Path(os.environ.get("HB_SHARED_DATA", ROOT.parent / "shared" / "data")) / "fed" / "fed_data.json"
CACHE = ROOT / "var" / "perf" / "fed_judge.json"
MODEL = "smollm2-135m-instruct"


def human_means(records):
    """external id -> the mean of the item's numeric Overall ratings (text such as "N/A" is missing)."""
    out = {}
    for index, record in enumerate(records):
        if "response" not in record:
            continue
        ratings = [r for r in record["annotations"]["Overall"]
                   if isinstance(r, (int, float)) and not isinstance(r, bool)]
        if ratings:
            out[f"fed-{index:03d}"] = float(np.mean(ratings))
    return out


def judge_ratings(refresh=False, rated_so_far=False, work=None, limit=None):
    """external id -> {rating, uncertainty} of the packaged model on the turn-level items (the first `limit`
    only, if given), cached. The run is scored chunk by chunk in this process and can be resumed: a later call
    goes on with its pending chunks."""
    suffix = f"-first{limit}" if limit else ""
    cache = Path(work) / f"fed_judge{suffix}.json" if work else CACHE.with_name(f"fed_judge{suffix}.json")
    if cache.is_file() and not refresh and not rated_so_far:
        return json.loads(cache.read_text())
    folder = cache.parent / f"fed-judge{suffix}"
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'judge.sqlite3'}"
    os.environ["HB_DATA_DIR"] = str(folder)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from benchmarks.models import Benchmark
    from modeleval import actions, runner
    from modeleval.models import ChunkState, EvalRun, Mode, Prediction, RunState
    from modeleval.selectors import prediction_uncertainty

    call_command("migrate", verbosity=0)
    if not Benchmark.objects.filter(slug="fed").exists():
        call_command("import_items", str(FED), format="fed", benchmark="fed")
    mode = Mode.RATING  # the judge this replay scores and finds again
    run = EvalRun.objects.filter(benchmark__slug="fed", mode=mode, model__name=MODEL).order_by("-id").first()
    if run is None or refresh:
        run = actions.start_run(model=actions.model_named(MODEL), benchmark=Benchmark.objects.get(slug="fed"),
                                mode=mode, tasks=["fed-turn"], limit=limit, enqueue=False)
    # Only this script scores this private database: a chunk left running was left by a process that is gone.
    run.chunks.filter(state=ChunkState.RUNNING).update(state=ChunkState.PENDING)
    started = time.perf_counter()
    if rated_so_far:  # the items the run has rated so far, read without scoring more (nothing cached)
        return {"model": MODEL, "mode": "rating", "run": run.pk, "partial": True, "items": {
            p.item.external_id: {"rating": p.rating, "uncertainty": prediction_uncertainty(p)}
            for p in Prediction.objects.filter(run=run).select_related("item", "run")}}
    if run.state != RunState.FINISHED:
        run = runner.run_sync(run, on_chunk=lambda r: print(f"  {r.items_done}/{r.items_total} items rated",
                                                            flush=True))
    if run.state != RunState.FINISHED:
        raise SystemExit(f"run {run.pk} is {run.state}; run the script again to go on")
    rows = {}
    for p in Prediction.objects.filter(run=run).select_related("item", "run"):
        rows[p.item.external_id] = {"rating": p.rating, "uncertainty": prediction_uncertainty(p)}
    cache.write_text(json.dumps({"model": MODEL, "mode": "rating", "run": run.pk,
                                 "seconds_last_call": round(time.perf_counter() - started, 1), "items": rows},
                                indent=1, sort_keys=True))
    return json.loads(cache.read_text())


def replay(truth, rating, uncertainty, budgets, seeds, share, confidence=0.95):
    from metrics.prediction_powered import active_mean, inclusion_probabilities, poisson_draw

    N, target = truth.size, float(truth.mean())
    designs = {"active": lambda b: inclusion_probabilities(uncertainty, b, share),
               "uniform": lambda b: np.full(N, b / N)}
    results = []
    for budget in budgets:
        for design, probabilities in designs.items():
            pi = probabilities(budget)
            covered = {"classical": 0, "anchored": 0}
            widths = {"classical": [], "anchored": []}
            labels = []
            for seed in range(seeds):
                drawn = poisson_draw(pi, seed + 1000 * budget)
                if drawn.sum() < 2:
                    continue
                # both designs are Poisson draws with known probabilities: the same design-based estimate
                result = active_mean(truth[drawn], rating[drawn], rating, pi[drawn], confidence=confidence)
                for name, interval in (("classical", result.classical), ("anchored", result.human_anchored)):
                    covered[name] += interval.low <= target <= interval.high
                    widths[name].append(interval.width)
                labels.append(int(drawn.sum()))
            runs = len(labels)
            results.append({"budget": budget, "design": design, "runs": runs, "mean_labels": float(np.mean(labels)),
                            **{f"{name}_coverage": covered[name] / runs for name in covered},
                            **{f"{name}_width": float(np.mean(widths[name])) for name in widths}})
    return target, results


def labels_for_width(results, design, estimator, width):
    """The mean labels the design needs for the estimator's mean width, interpolated over the budgets run."""
    points = sorted((r["mean_labels"], r[f"{estimator}_width"]) for r in results if r["design"] == design)
    labels, widths = zip(*points, strict=True)
    if width < min(widths) or width > max(widths):
        return None
    return float(np.interp(width, widths[::-1], labels[::-1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--budgets", type=int, nargs="+", default=[40, 60, 80, 100, 150, 200])
    parser.add_argument("--uniform-share", type=float, default=0.2)
    parser.add_argument("--refresh", action="store_true", help="rate the items with the model again")
    parser.add_argument("--rated-so-far", action="store_true",
                        help="replay on the items the judge has rated so far (a partial run; nothing is cached)")
    parser.add_argument("--limit", type=int, default=None, help="rate only the first N turn-level items")
    parser.add_argument("--work", default=None, help="folder for the judge's database and cache (default var/perf)")
    args = parser.parse_args()
    judge = judge_ratings(args.refresh, args.rated_so_far, args.work, args.limit)
    means = human_means(json.loads(FED.read_text()))
    ids = sorted(i for i in means if i in judge["items"] and judge["items"][i]["rating"] is not None)
    truth = np.array([means[i] for i in ids])
    rating = np.array([judge["items"][i]["rating"] for i in ids])
    uncertainty = np.array([judge["items"][i]["uncertainty"] or 0.0 for i in ids])
    if judge.get("partial"):
        print(f"PARTIAL: only the {len(ids)} items the judge has rated so far")
    print(f"FED turn level: {len(ids)} items, true mean Overall {truth.mean():.4f}; judge {judge['model']} "
          f"({judge['mode']}), correlation with the people {np.corrcoef(truth, rating)[0, 1]:.3f}")
    target, results = replay(truth, rating, uncertainty, args.budgets, args.seeds, args.uniform_share)
    print(f"{args.seeds} seeds, uniform share {args.uniform_share}, 95% intervals\n")
    print(f"{'budget':>6} {'design':>8} {'labels':>7} {'cover cl':>9} {'cover PPI':>9} {'width cl':>9} "
          f"{'width PPI':>9}")
    for r in results:
        print(f"{r['budget']:>6} {r['design']:>8} {r['mean_labels']:>7.1f} {r['classical_coverage']:>9.3f} "
              f"{r['anchored_coverage']:>9.3f} {r['classical_width']:>9.4f} {r['anchored_width']:>9.4f}")
    print("\nlabels saved: for the width active selection with PPI reaches at each budget, the labels that "
          "uniform sampling needs")
    for r in (r for r in results if r["design"] == "active"):
        width = r["anchored_width"]
        for design, estimator in (("uniform", "anchored"), ("uniform", "classical")):
            needed = labels_for_width(results, design, estimator, width)
            text = "beyond the budgets run" if needed is None else (
                f"{needed:.0f} labels ({needed - r['mean_labels']:+.0f}, {1 - r['mean_labels'] / needed:+.0%} saved)")
            print(f"  budget {r['budget']:>4} (width {width:.4f}): uniform {estimator:>9}: {text}")


if __name__ == "__main__":
    main()
