import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn import metrics as skm
from statsmodels.stats.contingency_tables import mcnemar

from metrics.comparison import (
    accuracy_with_wilson,
    classification_metrics,
    correlations,
    leave_one_out_correlations,
    mcnemar_exact,
    paired_bootstrap_gap,
)

FAST = settings(max_examples=50, deadline=None)
flags = st.lists(st.booleans(), min_size=1, max_size=60)
paired_flags = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60)


@pytest.mark.parametrize("k, n, low, high", [
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table II, score method (method 3).
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718),
])
def test_wilson_matches_published_values(k, n, low, high):
    result = accuracy_with_wilson([True] * k + [False] * (n - k))
    assert (result.n_correct, result.n, result.accuracy) == (k, n, k / n)
    assert result.low == pytest.approx(low, abs=6e-5) and result.high == pytest.approx(high, abs=6e-5)


@FAST
@given(flags, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_against_closed_form(values, confidence):
    n, p = len(values), sum(values) / len(values)
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    result = accuracy_with_wilson(values, confidence)
    assert result.low == pytest.approx(centre - half, abs=1e-12)
    assert result.high == pytest.approx(centre + half, abs=1e-12)


def test_accuracy_edge_cases():
    assert accuracy_with_wilson([]).undefined_reason == "no items"
    with pytest.raises(ValueError):
        accuracy_with_wilson([True, None])
    with pytest.raises(ValueError):
        accuracy_with_wilson([True, 2])


@FAST
@given(paired_flags)
def test_mcnemar_matches_statsmodels_and_binomial(pairs):
    human, model = map(list, zip(*pairs, strict=True))
    b = sum(h and not m for h, m in pairs)
    c = sum(m and not h for h, m in pairs)
    table = [[sum(h and m for h, m in pairs), b], [c, sum(not h and not m for h, m in pairs)]]
    result = mcnemar_exact(human, model)
    assert result.table == table and (result.human_only, result.model_only) == (b, c)
    reference = mcnemar(np.array(table), exact=True)
    assert result.statistic == reference.statistic and result.pvalue == pytest.approx(reference.pvalue)
    binomial = stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert result.pvalue == pytest.approx(binomial)
    assert (result.note is None) == (b + c > 0)


def test_paired_inputs_must_align():
    with pytest.raises(ValueError, match="pair them"):
        mcnemar_exact([True], [True, False])


@FAST
@given(paired_flags)
def test_gap_is_difference_of_accuracies_and_reproducible(pairs):
    human, model = map(list, zip(*pairs, strict=True))
    result = paired_bootstrap_gap(human, model, n_resamples=200, seed=3)
    assert result.gap == pytest.approx(np.mean(human) - np.mean(model))
    assert result.low <= result.high
    assert result == paired_bootstrap_gap(human, model, n_resamples=200, seed=3)


def test_gap_interval_agrees_with_scipy_paired_bootstrap():
    rng = np.random.default_rng(7)
    human = rng.random(300) < 0.85
    model = np.where(rng.random(300) < 0.7, human, rng.random(300) < 0.5)
    ours = paired_bootstrap_gap(human.tolist(), model.tolist(), n_resamples=4000, seed=1)
    ref = stats.bootstrap((human, model), lambda h, m, axis: h.mean(axis) - m.mean(axis), paired=True,
                          vectorized=True, n_resamples=4000, method="percentile", random_state=2)
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.01)


def test_gap_of_identical_answers_has_no_spread():
    # Resampling items with both sides together: identical answers can never differ.
    same = [True, False, True, True, False] * 10
    result = paired_bootstrap_gap(same, same, n_resamples=300)
    assert (result.gap, result.low, result.high) == (0.0, 0.0, 0.0)
    assert paired_bootstrap_gap([], []).undefined_reason == "no items"


finite = st.floats(-100, 100, allow_nan=False)


@FAST
@given(st.lists(st.tuples(st.one_of(finite, st.none()), st.one_of(finite, st.just(math.nan))), max_size=30))
def test_correlations_match_scipy(pairs):
    x, y = (list(v) for v in zip(*pairs, strict=True)) if pairs else ([], [])
    kept = [(a, b) for a, b in pairs if a is not None and not math.isnan(b)]
    result = correlations(x, y)
    assert (result.n, result.n_dropped) == (len(kept), len(pairs) - len(kept))
    xs, ys = np.array([a for a, _ in kept]), np.array([b for _, b in kept])
    if len(kept) < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        assert result.undefined_reason and result.spearman.value is None
        return
    for ours, ref in [(result.spearman, stats.spearmanr(xs, ys)), (result.pearson, stats.pearsonr(xs, ys)),
                      (result.kendall_tau_b, stats.kendalltau(xs, ys, variant="b"))]:
        if math.isnan(ref.statistic):
            assert ours.value is None
        else:
            assert ours.value == pytest.approx(ref.statistic, abs=1e-12)
            assert ours.pvalue == pytest.approx(ref.pvalue, abs=1e-12)


def test_correlation_reasons():
    assert "x is constant" in correlations([1, 1, 1, 1], [1, 2, 3, 4]).undefined_reason
    assert "x and y is constant" in correlations([1, 1, 1], [2, 2, 2]).undefined_reason
    assert "fewer than 3" in correlations([1, None, 3], [1, 2, None]).undefined_reason


@pytest.mark.filterwarnings("ignore::UserWarning")  # sklearn on single-class samples
@FAST
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=50))
def test_classification_matches_sklearn(pairs):
    gold, pred = map(list, zip(*pairs, strict=True))
    labels = sorted(set(gold) | set(pred))
    result = classification_metrics(gold, pred)
    assert result.accuracy == pytest.approx(skm.accuracy_score(gold, pred))
    assert result.uar == pytest.approx(skm.balanced_accuracy_score(gold, pred))
    for average in ("macro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(gold, pred, labels=labels, average=average, zero_division=0)
        ours = [getattr(result, f"{average}_{name}") for name in ("precision", "recall", "f1")]
        assert ours == pytest.approx([p, r, f])
    assert result.confusion_matrix == skm.confusion_matrix(gold, pred, labels=labels).tolist()
    gold_classes = set(gold)
    per_class_recall = [c.recall for c in result.per_class if c.label in gold_classes]
    assert result.uar == pytest.approx(np.mean(per_class_recall))
    assert all(c.recall is None for c in result.per_class if c.label not in gold_classes)
    assert result.majority_class_rate == pytest.approx(max(gold.count(v) for v in gold) / len(gold))


def test_uar_is_mean_of_class_recalls_not_macro_over_unseen_labels():
    gold = [0, 0, 0, 0, 1, 1, 2, 2, 2, 2]
    pred = [0, 0, 1, 2, 1, 0, 2, 2, 2, 3]  # 3 never occurs in gold
    result = classification_metrics(gold, pred)
    assert result.uar == pytest.approx((2 / 4 + 1 / 2 + 3 / 4) / 3)
    assert result.macro_recall == pytest.approx((2 / 4 + 1 / 2 + 3 / 4 + 0) / 4)  # sklearn counts class 3


def test_unparsable_predictions_count_as_wrong():
    result = classification_metrics(["a", "b", "b", "c"], ["a", None, "b", "zzz"], labels=["a", "b", "c"])
    assert result.accuracy == 0.5 and result.n_invalid_predictions == 2
    assert result.uar == pytest.approx((1 + 0.5 + 0) / 3)
    assert result.confusion_matrix == [[1, 0, 0], [0, 1, 0], [0, 0, 0]]
    assert classification_metrics([], []).undefined_reason == "no items"
    with pytest.raises(ValueError, match="not in labels"):
        classification_metrics(["d"], ["a"], labels=["a"])


def test_paired_bootstrap_gaps_equal_the_single_model_gap_for_every_model():
    from metrics import paired_bootstrap_gaps

    rng = np.random.default_rng(1)
    human = rng.random(300) < 0.8
    models = [rng.random(300) < p for p in (0.5, 0.7, 0.9)]
    result = paired_bootstrap_gaps(human, models, 500, 9, 0.9)
    for model, (gap, low, high) in zip(models, result.gaps, strict=True):
        expected = paired_bootstrap_gap(human.tolist(), model.tolist(), n_resamples=500, seed=9, confidence=0.9)
        assert (gap, low, high) == (expected.gap, expected.low, expected.high)
    assert result.replicates.shape == (500, 3)


def test_leave_one_out_correlations_match_scipy_against_the_other_raters_mean():
    per_item = {1: {"a": 1, "b": 2, "c": 2}, 2: {"a": 3, "b": 3, "c": 5}, 3: {"a": 2, "b": 1},
                4: {"a": 5, "b": 4, "c": 4, "d": "n/a"}, 5: {"a": 4, "c": 3}, 6: {"b": True, "c": 1}}
    result = dict(leave_one_out_correlations(per_item, [1, 2, 3, 4, 5, 6]))
    assert sorted(result) == ["a", "b", "c", "d"]
    # a against the mean of b and c on the items where a and someone else rated.
    a, rest = [1, 3, 2, 5, 4], [2, 4, 1, 4, 3]
    assert result["a"].spearman.value == pytest.approx(stats.spearmanr(a, rest).statistic)
    assert result["a"].pearson.value == pytest.approx(stats.pearsonr(a, rest).statistic)
    b, rest = [2, 3, 1, 4, 1.0], [1.5, 4, 2, 4.5, 1]  # yes/no reads as 1/0
    assert result["b"].pearson.value == pytest.approx(stats.pearsonr(b, rest).statistic)
    assert result["d"].n == 0 and result["d"].spearman.value is None  # text is not a rating


@pytest.mark.parametrize("n_items, n_models", [(1, 1), (5, 2), (301, 3), (70_000, 7)])
def test_paired_bootstrap_gaps_replicates_are_each_resamples_mean_gap_exactly(n_items, n_models):
    from metrics import paired_bootstrap_gaps
    from metrics.bootstrap import resample_indices

    rng = np.random.default_rng(n_items)
    human = rng.random(n_items) < 0.8
    models = [rng.random(n_items) < p for p in np.linspace(0.3, 0.9, n_models)]
    result = paired_bootstrap_gaps(human, models, 40, 5)
    for j, model in enumerate(models):
        diff = human.astype(float) - model.astype(float)
        assert result.replicates[:, j].tolist() == [diff[idx].mean() for idx in resample_indices(n_items, 40, 5)]
