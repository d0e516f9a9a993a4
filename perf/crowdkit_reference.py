"""Writes tests/metrics/data/crowdkit_reference.json: crowd-kit's answers on its own toy data sets, the reference that
tests/metrics/test_annotator_models.py holds our annotator models to.

Run with crowd-kit installed (pip install crowd-kit==1.4.2; it is not a dependency of the platform):

    python perf/crowdkit_reference.py TOY_AND_SIMPLE.json [--out PATH]   (default: the file above)

where the input holds crowd-kit's toy YSDA and simple data sets as {name: {"answers": [[worker, task,
label], ...], "gold": {task: label}}} (crowd-kit's tests/conftest.py, Apache-2.0). Each is fitted with
iterations enough for EM to settle (tolerance 0 where crowd-kit has one).

crowd-kit's MACE reads its per-label expected counts in the sorted order of the workers' and labels' names
but indexes its parameters in their order of first appearance, so that it is right only when the two agree:
the workers and labels are renamed here so that they do (a zero-padded rank in order of first appearance
before each name), and the names are restored in the output.
"""
import argparse
import json
from pathlib import Path

import crowdkit
import numpy as np
import pandas as pd
from crowdkit.aggregation import MACE, DawidSkene, OneCoinDawidSkene

DS_ITERATIONS = 100
MACE_ITERATIONS = 2000


def ordered_names(values):
    return {name: f"{n:03d}:{name}" for n, name in enumerate(dict.fromkeys(values))}


def fit(answers, gold):
    frame = pd.DataFrame(answers, columns=["worker", "task", "label"])
    out = {}
    ds = DawidSkene(n_iter=DS_ITERATIONS, tol=-np.inf).fit(frame)
    out["dawid_skene"] = {"posteriors": ds.probas_.to_dict(orient="index"),
                          "confusion": {w: ds.errors_.loc[w].to_dict() for w in frame.worker.unique()},
                          "priors": ds.priors_.to_dict()}
    if gold:
        ds_gold = DawidSkene(n_iter=DS_ITERATIONS, tol=-np.inf).fit(frame, pd.Series(gold))
        out["dawid_skene_gold"] = {"posteriors": ds_gold.probas_.to_dict(orient="index"),
                                   "confusion": {w: ds_gold.errors_.loc[w].to_dict() for w in frame.worker.unique()},
                                   "priors": ds_gold.priors_.to_dict()}
    oc = OneCoinDawidSkene(n_iter=DS_ITERATIONS, tol=-np.inf).fit(frame)
    out["one_coin"] = {"posteriors": oc.probas_.to_dict(orient="index"), "skills": oc.skills_.to_dict(),
                       "priors": oc.priors_.to_dict()}
    workers, labels = ordered_names(frame.worker), ordered_names(frame.label)
    renamed = frame.assign(worker=frame.worker.map(workers), label=frame.label.map(labels))
    back_worker = {v: k for k, v in workers.items()}
    back_label = {v: k for k, v in labels.items()}
    for method in ("em", "vb"):
        model = MACE(n_restarts=1, n_iter=MACE_ITERATIONS, method=method, random_state=0).fit(renamed)
        names = list(dict.fromkeys(renamed.worker))
        probas = model.probas_.rename(columns=back_label)
        out[f"mace_{method}"] = {
            "posteriors": probas.to_dict(orient="index"),
            # spamming_[:, 0]: spamming, [:, 1]: knowing (with "vb", geometric means that need not sum to 1)
            "spamming": {back_worker[w]: float(model.spamming_[n, 0]) for n, w in enumerate(names)},
            "knowing": {back_worker[w]: float(model.spamming_[n, 1]) for n, w in enumerate(names)}}
    return out


def plain(value):
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (np.floating, float)):
        return float(value)
    return value


OUT = Path(__file__).resolve().parent.parent / "tests" / "metrics" / "data" / "crowdkit_reference.json"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="crowd-kit's toy data sets as JSON")
    parser.add_argument("--out", default=str(OUT), help="where the reference is written")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.path).read_text())
    reference = {"crowd_kit": crowdkit.__version__ if hasattr(crowdkit, "__version__") else "1.4.2",
                 "dawid_skene_iterations": DS_ITERATIONS, "mace_iterations": MACE_ITERATIONS, "data_sets": {}}
    for name, spec in data.items():
        reference["data_sets"][name] = {**spec, "crowd_kit": plain(fit(spec["answers"], spec.get("gold")))}
    out = Path(args.out)
    out.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
