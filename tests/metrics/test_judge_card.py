"""A judge's card: agreement against scikit-learn and SciPy, savings against ppi-python's interval and PPI++'s
variance, the factor-of-two limit, swap consistency against statsmodels' Wilson interval, and, with the alternative
annotator test's published annotations, the savings beside the squared correlations on each of its data sets."""
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from metrics import majority_label, ppi_mean
from metrics.bootstrap import bootstrap_ci
from metrics.judge_card import NO_BETTER_FACTOR, judge_agreement, label_savings, swap_consistency
from tests.conftest import SHARED_DATA
from tests.metrics.test_alt_test import PUBLISHED

# The alternative annotator test's annotations (GitHub nitaytech/AltTest, data/<name>/{human,llm}_annotations.json),
# read from here when present: they are not shipped with the project.
ALTTEST_DATA = Path(os.environ.get("HB_ALTTEST_DATA") or SHARED_DATA / "alttest")


def pilot(n=2000, rho=0.6, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n)
    y = rho * f + np.sqrt(1 - rho ** 2) * rng.normal(size=n)
    return y, f


def test_realised_savings_are_ppi_pythons_effective_n():
    y, f = pilot()
    labelled, unlabelled = slice(0, 500), slice(500, None)
    result = label_savings(y[labelled], f[labelled], f[unlabelled], estimand="mean", confidence=0.9)
    reference = ppi_mean(y[labelled], f[labelled], f[unlabelled], confidence=0.9)
    assert result.n == 500 and result.N == 1500
    assert result.realised_factor == pytest.approx(reference.effective_n / 500)
    assert result.realised_saved == pytest.approx(1 - 500 / reference.effective_n)
    assert result.rho_squared == pytest.approx(stats.pearsonr(y[labelled], f[labelled]).statistic ** 2)
    assert result.expected_saved == pytest.approx(result.rho_squared)
    assert result.expected_factor == pytest.approx(1 / (1 - result.rho_squared))
    # PPI++ at its tuned lambda: Var = Var(y) / n (1 - rho^2 N / (n + N)); realised and expected agree
    assert result.expected_saved_here == pytest.approx(result.rho_squared * 1500 / 2000)
    assert result.realised_saved == pytest.approx(result.expected_saved_here, abs=0.01)
    assert not result.capped and result.cap_reason is None


def test_a_judge_no_better_than_the_model_claims_at_most_a_factor_of_two():
    y, f = pilot(rho=0.95)
    free = label_savings(y[:300], f[:300], f[300:], estimand="accuracy", judge_accuracy=0.9, model_accuracy=0.8)
    held = label_savings(y[:300], f[:300], f[300:], estimand="accuracy", judge_accuracy=0.8, model_accuracy=0.8)
    assert free.expected_factor > NO_BETTER_FACTOR and not free.capped
    assert held.capped and "no more accurate" in held.cap_reason
    assert held.uncapped_expected_factor == pytest.approx(free.expected_factor)
    assert held.expected_factor == NO_BETTER_FACTOR and held.expected_saved == 0.5
    assert held.realised_factor <= NO_BETTER_FACTOR and held.realised_saved <= 0.5
    assert held.uncapped_realised_factor == pytest.approx(free.realised_factor)


def test_savings_are_undefined_with_a_reason_without_spread():
    result = label_savings([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0], estimand="mean")
    assert result.rho_squared is None and result.expected_saved is None
    assert result.realised_saved is None and result.undefined_reason


def test_agreement_is_scikit_learns_kappa_and_scipys_spearman_with_intervals():
    rng = np.random.default_rng(1)
    people = rng.integers(0, 3, 200).tolist()
    judge = [p if rng.random() < 0.7 else int(rng.integers(0, 3)) for p in people]
    kappa = judge_agreement(people, judge, ratings=False, n_resamples=200)
    assert kappa.statistic == "cohen_kappa" and kappa.n == 200
    assert kappa.value == pytest.approx(cohen_kappa_score(people, judge))
    assert kappa.low < kappa.value < kappa.high
    ratings = rng.normal(size=100)
    judged = ratings + rng.normal(size=100)
    rho = judge_agreement(ratings.tolist(), judged.tolist(), ratings=True, n_resamples=200)
    assert rho.value == pytest.approx(stats.spearmanr(ratings, judged).statistic)
    assert rho.low < rho.value < rho.high
    assert judge_agreement([1, None], [None, 2], ratings=True).undefined_reason
    # the intervals: the generic percentile bootstrap (same resamples) of scikit-learn's and SciPy's figures
    slow = bootstrap_ci(lambda sample: cohen_kappa_score(*zip(*sample, strict=True)),
                        list(zip(people, judge, strict=True)), n_resamples=200)
    assert (kappa.low, kappa.high) == pytest.approx((slow.low, slow.high))
    slow = bootstrap_ci(lambda sample: stats.spearmanr(*zip(*sample, strict=True)).statistic,
                        list(zip(ratings, judged, strict=True)), n_resamples=200)
    assert (rho.low, rho.high) == pytest.approx((slow.low, slow.high))


def test_swap_consistency_is_a_share_with_its_wilson_interval():
    verdicts = [("win", "win")] * 7 + [("win", "lose")] * 2 + [("tie", "tie"), (None, "win")]
    result = swap_consistency(verdicts)
    assert (result.n_pairs, result.n_consistent) == (10, 8) and result.consistency == 0.8
    low, high = proportion_confint(8, 10, alpha=0.05, method="wilson")
    assert (result.low, result.high) == pytest.approx((low, high))
    assert swap_consistency([(None, None)]).consistency is None


def alttest(name):
    folder = ALTTEST_DATA / name
    if not (folder / "llm_annotations.json").is_file():
        reason = f"the alternative annotator test's annotations not found at {folder} (set HB_ALTTEST_DATA)"
        print(f"skipping: {reason}")
        pytest.skip(reason)
    return (json.loads((folder / "human_annotations.json").read_text()),
            json.loads((folder / "llm_annotations.json").read_text()))


def people_figure(human, ratings):
    """item -> the people's mean rating, or whether their majority label is the most frequent one (and that
    label): the card's estimands for ratings and for labels without gold."""
    by_item = {}
    for answers in human.values():
        for item, value in answers.items():
            by_item.setdefault(item, []).append(value)
    if ratings:
        return {i: float(np.mean([float(v) for v in values])) for i, values in by_item.items()}, None
    majority = {i: m for i, values in by_item.items() if (m := majority_label(values)) is not None}
    main = Counter(majority.values()).most_common(1)[0][0]
    return {i: float(m == main) for i, m in majority.items()}, main


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_savings_on_the_alternative_annotator_tests_data_beside_the_squared_correlation(name):
    """Half of each data set's items (seeded) read as labelled, the rest as judge-only: the realised savings are
    PPI++'s, and they sit by rho^2 N / (n + N) (here N = n, so rho^2 / 2)."""
    human, judges = alttest(name)
    scoring, _, published = PUBLISHED[name]
    ratings = scoring == "neg_rmse"
    figure, main = people_figure(human, ratings)
    lines = []
    for judge in published:
        answers = judges[judge]
        items = sorted(i for i in figure if answers.get(i) is not None)
        labelled = set(np.random.default_rng(0).permutation(items)[: len(items) // 2].tolist())

        def stand(i, answers=answers):
            return float(answers[i]) if ratings else float(answers[i] == main)

        result = label_savings([figure[i] for i in items if i in labelled], [stand(i) for i in items if i in labelled],
                               [stand(i) for i in items if i not in labelled], estimand=name)
        lines.append(f"{name} {judge}: n {result.n}, N {result.N}, saved {result.realised_saved}, "
                     f"rho^2 {result.rho_squared}")
        if result.rho_squared is None:
            continue
        assert result.realised_saved == pytest.approx(result.expected_saved_here, abs=0.03), judge
        assert result.expected_saved_here == pytest.approx(result.rho_squared * result.N / (result.n + result.N))
    print("\n".join(lines))
