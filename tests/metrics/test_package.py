"""The package stays pure (no Django, nothing else of ours) and its results are plain JSON."""
import ast
import json
import sys
from functools import partial
from pathlib import Path

import numpy as np

import metrics

ALLOWED = set(sys.stdlib_module_names) | {"numpy", "scipy", "statsmodels", "sklearn", "krippendorff", "ppi_py"}


def test_imports_only_stdlib_and_scientific_libraries():
    for path in Path(metrics.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            assert set(roots) <= ALLOWED, f"{path.name} imports {roots}"


def test_results_serialise_to_json_without_help():
    labels = np.array([[1, 2, 2], [2, 2, 2], [1, 1, np.nan]])  # numpy in, plain Python out
    h = np.array([True, False, True, True])
    m = np.array([True, True, False, False])
    matches = [("a", "b", "win"), ("b", "c", "tie"), ("c", "a", "win"), ("a", "b", "lose")]
    results = [
        metrics.fleiss_kappa(labels.tolist(), given="labels"), metrics.krippendorff_alpha(list(labels)),
        metrics.cohen_kappa(labels[:, 0], labels[:, 1]), metrics.percent_agreement(list(labels)),
        metrics.bootstrap_ci(partial(metrics.fleiss_kappa, given="labels"), labels.tolist(), n_resamples=20),
        metrics.majority_vote(np.array([1, 1, 2])), metrics.m_of_k_correct([["A", "A", "B"]], ["A"], 2),
        metrics.mean_of_raters_accuracy({"r1": ["A"]}, ["A"]), metrics.mean_rating_per_item(list(labels)),
        metrics.accuracy_with_wilson(h), metrics.paired_bootstrap_gap(h, m, n_resamples=20),
        metrics.mcnemar_exact(h, m), metrics.correlations(labels[:, 0], labels[:, 1]),
        metrics.classification_metrics(np.array([0, 1, 1]), np.array([0, 1, 0])),
        metrics.elo(matches), metrics.bradley_terry(matches),
        metrics.bradley_terry_bootstrap(matches, n_resamples=20),
        *metrics.per_item_agreement(list(labels)), *metrics.win_tie_lose(matches),
        metrics.dawid_skene([(1, "a", "x"), (1, "b", "y"), (2, "a", "x")], gold={2: "x"}),
        metrics.mace([(1, "a", "x"), (1, "b", "y"), (2, "a", "x")]),
        metrics.ppi_mean(h, m, np.tile(m, 3), confidence=0.95),
        metrics.plan_labels(h, m, np.tile(m, 3), target_width=0.5, confidence=0.95),
        metrics.alt_test({"a": {1: "x", 2: "y"}, "b": {1: "x", 2: "x"}}, {1: "x", 2: "y"}, epsilon=0.1),
    ]
    for result in results:
        json.dumps(result.to_dict(), allow_nan=False)
