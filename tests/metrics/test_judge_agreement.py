"""A judge against the people as JUDGE-BENCH's eval_responses.py measures it: Cohen's kappa of the labels' codes
against the majority (1 where the two agree item for item) and the three correlations, or for ratings the
correlations with the people's mean; checked against scikit-learn and SciPy."""
import random

import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr
from sklearn.metrics import cohen_kappa_score

from metrics import judge_agreement

LABELS = ["No", "Yes", "Unsure"]


def test_categorical_answers_as_sklearn_and_scipy_measure_their_codes():
    rng = random.Random(3)
    people = [rng.choice(LABELS) for _ in range(60)]
    judge = [p if rng.random() < 0.6 else rng.choice(LABELS) for p in people]
    found = judge_agreement(people, judge, labels=LABELS)
    h, m = [LABELS.index(x) for x in people], [LABELS.index(x) for x in judge]
    assert found.kappa == pytest.approx(cohen_kappa_score(h, m), abs=1e-12)
    assert found.correlations.pearson.value == pytest.approx(pearsonr(h, m)[0], abs=1e-12)
    assert found.correlations.spearman.value == pytest.approx(spearmanr(h, m)[0], abs=1e-12)
    assert found.correlations.kendall_tau_b.value == pytest.approx(kendalltau(h, m)[0], abs=1e-12)
    assert (found.n, found.n_left_out) == (60, 0)


def test_identical_answers_agree_perfectly_and_a_missing_answer_is_left_out():
    found = judge_agreement(["No", "No", "Yes"], ["No", "No", "Yes"], labels=LABELS)
    assert found.kappa == 1.0
    constant = judge_agreement(["No", "No"], ["No", "No"], labels=LABELS)
    assert constant.kappa == 1.0  # sklearn's kappa is undefined here: the study sets 1
    partial = judge_agreement(["No", "Yes", "No", "Yes"], ["No", None, "Yes", "Yes"], labels=LABELS)
    assert (partial.n, partial.n_left_out) == (3, 1)
    assert partial.kappa == pytest.approx(cohen_kappa_score([0, 0, 1], [0, 1, 1]))
    with pytest.raises(ValueError, match="not in labels"):
        judge_agreement(["No"], ["Maybe"], labels=LABELS)


def test_ratings_against_the_mean_have_correlations_and_no_kappa():
    means = [1.5, 2.0, 4.2, 3.3, 5.0, 2.7]
    judge = [2.0, 1.0, 4.0, 3.0, 5.0, 3.0]
    found = judge_agreement(means, judge)
    assert found.kappa is None and "correlations" in found.kappa_undefined_reason
    assert found.correlations.pearson.value == pytest.approx(pearsonr(means, judge)[0], abs=1e-12)
    assert found.correlations.kendall_tau_b.value == pytest.approx(kendalltau(means, judge)[0], abs=1e-12)
