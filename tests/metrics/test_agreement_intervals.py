"""Intervals for Fleiss' kappa and Krippendorff's alpha: their values at weight 1 are statsmodels' and the
krippendorff package's, and they cover over simulated 50-item x 3-rater designs."""
import numpy as np
import pytest

from metrics.agreement import fleiss_kappa, krippendorff_alpha
from metrics.agreement_intervals import fleiss_kappa_interval, krippendorff_alpha_interval


def design(seed, n_items=50, raters=3, categories=4, share_true=0.6):
    """Each rater copies the item's true category with probability `share_true`, else draws one uniformly."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, categories, n_items)
    copy = rng.random((n_items, raters)) < share_true
    return np.where(copy, truth[:, None], rng.integers(0, categories, (n_items, raters))).tolist()


def _jackknife_se(statistic, ratings):
    left = np.array([statistic(ratings[:i] + ratings[i + 1:]) for i in range(len(ratings))])
    return np.sqrt((len(left) - 1) / len(left) * ((left - left.mean()) ** 2).sum())


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_and_its_jackknife_are_the_krippendorff_package_s(level):
    ratings = [[v + 1 for v in item] for item in design(1)]
    ratings[0] = [1, None, 3]
    ratings[1] = [2, 2]
    fast = krippendorff_alpha_interval(ratings, level, n_resamples=10, seed=5)
    assert fast.estimate == pytest.approx(krippendorff_alpha(ratings, level).value)
    assert fast.jackknife_se == pytest.approx(_jackknife_se(lambda r: krippendorff_alpha(r, level).value, ratings))


def test_fleiss_kappa_and_its_jackknife_are_statsmodels():
    ratings = design(2)
    fast = fleiss_kappa_interval(ratings, n_resamples=10, seed=9)
    assert fast.estimate == pytest.approx(fleiss_kappa(ratings, given="labels").value)
    assert fast.jackknife_se == pytest.approx(_jackknife_se(lambda r: fleiss_kappa(r, given="labels").value, ratings))


def test_the_bootstrap_is_scipy_s_bca_over_items_with_the_package_s_statistic():
    """Drawn per kind of item, the BCa interval is scipy's BCa bootstrap of the package's statistic over items."""
    from scipy.stats import bootstrap

    ratings = [[v + 1 for v in item] for item in design(3)]
    for fast, statistic in (
            (fleiss_kappa_interval(ratings, n_resamples=3000, seed=1),
             lambda idx: fleiss_kappa([ratings[i] for i in idx], given="labels").value),
            (krippendorff_alpha_interval(ratings, "ordinal", n_resamples=3000, seed=1),
             lambda idx: krippendorff_alpha([ratings[i] for i in idx], "ordinal").value)):
        slow = bootstrap((np.arange(len(ratings)),), statistic, vectorized=False, n_resamples=3000, method="BCa",
                         random_state=2).confidence_interval
        assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=0.025)


def _coverage(repetitions, n_resamples):
    """The population's kappa and alpha, from one very large design, against each small design's intervals."""
    big = design(10_000, n_items=200_000)
    truth = {"kappa": fleiss_kappa(big, given="labels").value, "alpha": krippendorff_alpha(big).value}
    hits = {"kappa": [0, 0], "alpha": [0, 0]}
    for seed in range(repetitions):
        ratings = design(seed)
        for name, interval in (("kappa", fleiss_kappa_interval(ratings, n_resamples=n_resamples, seed=seed)),
                               ("alpha", krippendorff_alpha_interval(ratings, n_resamples=n_resamples, seed=seed))):
            hits[name][0] += interval.low <= truth[name] <= interval.high
            hits[name][1] += interval.jackknife_low <= truth[name] <= interval.jackknife_high
    return {name: (b / repetitions, j / repetitions) for name, (b, j) in hits.items()}


def test_agreement_intervals_cover_on_50_items_x_3_raters_fast():
    for bootstrap, jackknife in _coverage(100, 200).values():
        assert 0.88 <= bootstrap <= 0.99 and 0.88 <= jackknife <= 0.99


@pytest.mark.slow
def test_agreement_intervals_cover_over_2000_designs_of_50_items_x_3_raters():
    for bootstrap, jackknife in _coverage(2000, 1000).values():
        assert 0.93 <= bootstrap <= 0.97 and 0.93 <= jackknife <= 0.97
