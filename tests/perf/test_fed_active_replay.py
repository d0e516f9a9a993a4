"""The FED replay's statistics on synthetic data: weighted PPI under active selection covers the true mean as
uniform sampling does, and is narrower for the same budget when the judge's uncertainty is informative."""
import numpy as np

from perf.fed_active_replay import labels_for_width, replay


def test_active_selection_keeps_coverage_and_narrows_the_interval():
    rng = np.random.default_rng(0)
    n = 375
    truth = rng.uniform(0, 4, n)
    noise_sd = np.where(rng.random(n) < 0.3, 1.2, 0.15)  # the judge is unsure of a third of the items
    rating = truth + rng.normal(0, noise_sd)
    target, results = replay(truth, rating, noise_sd / noise_sd.max(), [60, 120, 200], 400, 0.2)
    assert target == truth.mean()
    by = {(r["budget"], r["design"]): r for r in results}
    for r in results:
        assert 0.9 <= r["anchored_coverage"] <= 0.985, r
        assert 0.9 <= r["classical_coverage"] <= 0.985, r
    assert by[120, "active"]["anchored_width"] < by[120, "uniform"]["anchored_width"]
    assert by[120, "uniform"]["anchored_width"] < by[120, "uniform"]["classical_width"]
    needed = labels_for_width(results, "uniform", "anchored", by[60, "active"]["anchored_width"])
    assert needed is None or needed > by[60, "active"]["mean_labels"]
