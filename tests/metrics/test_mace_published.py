"""`mace` is MACE as published (crowd-kit 1.4.2's MACE with its defaults); `mace_em` is the model fitted to its
likelihood's maximum, named apart.

crowd-kit is not a dependency of the platform: the comparison with the library itself runs crowd-kit in its own
venv, perf/.envs/crowdkit (python3 -m venv perf/.envs/crowdkit && perf/.envs/crowdkit/bin/pip install
crowd-kit==1.4.2), and skips with a printed reason without it. The stored reference (data/
crowdkit_reference.json, crowd-kit's toy data sets) needs no venv.
"""
import json
import subprocess

import numpy as np
import pytest

from metrics.aggregation import ANNOTATOR_METHODS, annotator_model, disagreement_with_majority, mace, mace_em
from tests.conftest import ROOT
from tests.metrics.test_annotator_models import REFERENCE, answers, assert_posteriors, reference

CROWDKIT = ROOT / "perf" / ".envs" / "crowdkit" / "bin" / "python"
# Runs crowd-kit's MACE on answers read from stdin as [[worker, task, label], ...]; writes its probabilities,
# labels and (spamming, knowing) weights per worker.
CROWDKIT_SCRIPT = """
import json, sys
import pandas as pd
from crowdkit.aggregation import MACE
spec = json.load(sys.stdin)
frame = pd.DataFrame(spec["answers"], columns=["worker", "task", "label"])
model = MACE(**spec["options"]).fit(frame)
workers = list(dict.fromkeys(frame.worker))
print(json.dumps({"probas": model.probas_.to_dict(orient="index"), "labels": model.labels_.to_dict(),
                  "spamming": {w: list(map(float, model.spamming_[n])) for n, w in enumerate(workers)}}))
"""


def crowd(n_items=400, seed=3):
    """Three labels, six workers of mixed skill (one answers at random, one nearly always "b"), four answers per
    item. Names sort in their order of first appearance (crowd-kit reads counts in sorted order)."""
    rng = np.random.default_rng(seed)
    labels = ["l0", "l1", "l2"]
    skill = [0.9, 0.8, 0.7, 0.6, 0.0, 0.1]
    rows = [(f"t{i:04d}", f"w{w}", labels[w % 3]) for i, w in enumerate(range(6))]  # every name once, in order
    truth = rng.integers(0, 3, n_items)
    for i in range(6, n_items):
        for w in rng.choice(6, size=4, replace=False):
            if rng.random() < skill[w]:
                given = truth[i]
            elif w == 5:
                given = 1
            else:
                given = rng.integers(0, 3)
            rows.append((f"t{i:04d}", f"w{w}", labels[given]))
    return rows


def run_crowdkit(rows, **options):
    if not CROWDKIT.is_file():
        reason = f"crowd-kit's venv not found at {CROWDKIT.parent.parent} (see this file's docstring)"
        print(f"skipping: {reason}")
        pytest.skip(reason)
    spec = {"answers": [[w, t, label] for t, w, label in rows], "options": options}
    done = subprocess.run([str(CROWDKIT), "-c", CROWDKIT_SCRIPT], input=json.dumps(spec), capture_output=True,
                          text=True, check=True, timeout=600)
    return json.loads(done.stdout)


@pytest.mark.slow  # crowd-kit starts in a process of its own
@pytest.mark.parametrize("variational", [True, False])
def test_mace_equals_crowd_kits_mace_with_its_defaults(variational):
    rows = crowd()
    expected = run_crowdkit(rows, method="vb" if variational else "em")  # n_restarts 10, n_iter 50, seed 0
    result = mace(rows, variational=variational)
    assert result.method == "mace" and result.iterations == 50
    assert_posteriors(result, expected["probas"], 1e-9)
    assert dict(zip(result.items, result.aggregate, strict=True)) == expected["labels"]
    for annotator, (spamming, knowing) in expected["spamming"].items():
        assert result.spamming[annotator] == pytest.approx(spamming, abs=1e-9)
        assert result.competence[annotator] == pytest.approx(knowing, abs=1e-9)


@pytest.mark.slow
def test_mace_equals_crowd_kit_with_other_settings():
    rows = crowd(n_items=150, seed=5)
    expected = run_crowdkit(rows, n_restarts=2, n_iter=7, random_state=11, alpha=1.0, beta=2.0)
    result = mace(rows, restarts=2, iterations=7, seed=11, alpha=1.0, beta=2.0)
    assert_posteriors(result, expected["probas"], 1e-9)


@pytest.mark.parametrize("name", sorted(REFERENCE["data_sets"]))
@pytest.mark.parametrize("variational", [False, True])
def test_mace_follows_crowd_kit_step_for_step_on_its_toy_data(name, variational):
    """The stored reference: crowd-kit's MACE for 2,000 iterations from its seeded start, one restart."""
    expected = reference(name, "mace_vb" if variational else "mace_em")
    result = mace(answers(name), variational=variational, restarts=1, iterations=REFERENCE["mace_iterations"])
    assert_posteriors(result, expected["posteriors"], 1e-12)
    assert result.spamming == pytest.approx(expected["spamming"], abs=1e-12)
    assert result.competence == pytest.approx(expected["knowing"], abs=1e-12)


def test_the_likelihoods_maximum_is_another_estimator_by_another_name():
    rows = crowd()
    published, settled = mace(rows), mace_em(rows)
    assert published.method == "mace" and settled.method == "mace_em"
    assert settled.converged and not published.converged
    assert "crowd-kit" in ANNOTATOR_METHODS["mace"] and "not the published" in ANNOTATOR_METHODS["mace_em"]
    assert annotator_model("mace_em", rows).posteriors == pytest.approx(settled.posteriors)
    assert annotator_model("mace", rows).posteriors == pytest.approx(published.posteriors)


def test_the_label_order_asked_for_orders_the_columns_only():
    rows = crowd(n_items=60)
    plain, reordered = mace(rows), mace(rows, labels=["l2", "l0", "l1"])
    assert reordered.labels == ["l2", "l0", "l1"]
    assert reordered.posteriors == pytest.approx(plain.posteriors[:, [2, 0, 1]])
    with pytest.raises(ValueError, match="not one of the labels"):
        mace(rows, labels=["l0", "l1"])
    with pytest.raises(ValueError, match="iterations"):
        mace(rows, iterations=-1)


def test_gold_is_held_in_the_published_mace():
    rows = crowd(n_items=60)
    result = mace(rows, gold={"t0010": "l2"})
    assert result.gold_fixed == 1
    assert result.posteriors[result.items.index("t0010")].tolist() == [0.0, 0.0, 1.0]


def test_disagreement_with_majority_vote():
    rows = [(1, "a", "x"), (1, "b", "x"), (1, "c", "y"), (2, "a", "y"), (2, "b", "y"), (3, "a", "x"), (3, "b", "y")]
    model = annotator_model("dawid_skene", rows)
    share = disagreement_with_majority(model, rows)
    majority = {1: "x", 2: "y"}  # item 3 is a tie: no majority label, so a disagreement whatever the model says
    expected = sum(majority.get(i) != a for i, a in zip(model.items, model.aggregate, strict=True)) / 3
    assert share == pytest.approx(expected)
    assert disagreement_with_majority(model, rows) >= 1 / 3
