from functools import partial

import numpy as np
import pytest
from scipy import stats

from metrics._common import percentile_interval, tail_levels
from metrics.agreement import bootstrap_ci, fleiss_kappa
from metrics.bootstrap import resample_indices


def test_percentile_interval_agrees_with_scipy():
    data = np.random.default_rng(11).normal(3.0, 1.0, size=200).tolist()
    ours = bootstrap_ci(np.mean, data, n_resamples=4000, seed=5)
    ref = stats.bootstrap((np.array(data),), np.mean, n_resamples=4000, method="percentile", random_state=6)
    assert ours.estimate == pytest.approx(np.mean(data))
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.03)
    assert ours.n_undefined == 0


def test_seeded_and_reproducible():
    data = list(range(30))
    assert bootstrap_ci(np.mean, data, 300, seed=1) == bootstrap_ci(np.mean, data, 300, seed=1)
    assert bootstrap_ci(np.mean, data, 300, seed=1) != bootstrap_ci(np.mean, data, 300, seed=2)


def test_wider_confidence_gives_wider_interval():
    data = list(np.random.default_rng(0).random(50))
    narrow = bootstrap_ci(np.mean, data, 1000, confidence=0.8)
    wide = bootstrap_ci(np.mean, data, 1000, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_undefined_resamples_are_skipped_and_counted():
    # Undefined whenever item 0 is drawn: probability 1 - (4/5)^5 = 0.672 per resample.
    data = ["bad", 1.0, 2.0, 3.0, 4.0]
    result = bootstrap_ci(lambda items: None if "bad" in items else float(np.mean(items)), data, 2000)
    assert result.estimate is None
    assert abs(result.n_undefined / 2000 - 0.672) < 4 * np.sqrt(0.672 * 0.328 / 2000)
    assert 1.0 <= result.low <= result.high <= 4.0


def test_works_with_agreement_results():
    items = [["a", "a", "b"], ["b", "b", "b"], ["a", "a", "a"], ["a", "b", "b"], ["a", "a", "b"]] * 4
    labels_kappa = partial(fleiss_kappa, given="labels")
    result = bootstrap_ci(labels_kappa, items, n_resamples=300)
    assert result.estimate == labels_kappa(items).value
    assert result.low <= result.estimate <= result.high


def test_edge_cases():
    assert bootstrap_ci(np.mean, []).undefined_reason == "no items"
    all_same = bootstrap_ci(partial(fleiss_kappa, given="labels"), [["x", "x"]] * 5, n_resamples=50)
    assert all_same.n_undefined == 50 and all_same.low is None and all_same.undefined_reason
    with pytest.raises(ValueError):
        bootstrap_ci(np.mean, [1, 2], confidence=95)


@pytest.mark.parametrize("n_items", [1, 2, 7, 8333, 100_001])
def test_resampled_indices_are_the_int64_draws(n_items):
    from metrics.bootstrap import resample_indices

    rng = np.random.default_rng(3)
    for idx in resample_indices(n_items, 3, seed=3):
        assert np.array_equal(idx, rng.integers(0, n_items, size=n_items))


def test_int32_and_int64_draws_agree_up_to_the_int32_bound():
    for high in (2**31 - 1, 12_345_677):
        ours = np.random.default_rng(3).integers(0, high, size=1001, dtype=np.int32)
        assert np.array_equal(ours, np.random.default_rng(3).integers(0, high, size=1001))


@pytest.mark.parametrize("confidence, levels", [(0.95, (2.5, 97.5)), (0.9, (5, 95)), (0.99, (0.5, 99.5)),
                                                (0.8, (10, 90))])
def test_interval_quantiles_are_taken_at_the_levels_as_written(confidence, levels):
    """A 95% interval is the 2.5th and 97.5th percentiles, not (1 - 0.95) / 2 = 0.025000000000000022 in floats."""
    # Evenly spaced values: any error in the level moves the interpolated quantile.
    values = np.arange(1000) * 0.1
    expected = tuple(float(v) for v in stats.scoreatpercentile(values, levels))
    assert tail_levels(confidence) == (levels[0] / 100, levels[1] / 100)
    assert percentile_interval(values, confidence) == expected
    # The bootstrap's interval is numpy's quantiles of its resampled statistics at those levels.
    data = np.random.default_rng(2).normal(size=40).tolist()
    result = bootstrap_ci(np.mean, data, n_resamples=999, seed=3, confidence=confidence)
    resampled = [np.mean([data[i] for i in idx]) for idx in resample_indices(len(data), 999, 3)]
    assert (result.low, result.high) == tuple(float(v) for v in np.percentile(resampled, levels))
