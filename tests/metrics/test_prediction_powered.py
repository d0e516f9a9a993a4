"""Human-anchored intervals against ppi-python and the textbook formulas, and their coverage on synthetic data."""
import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm

from metrics.prediction_powered import classical_mean, plan_labels, ppi_mean, width_curve


def judged(n, N, p=0.7, agreement=0.9, seed=0):
    """n labelled items (truth and the judge's answer) and N judge-only ones, the judge agreeing with the truth
    with probability `agreement`."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n + N) < p).astype(float)
    f = np.where(rng.random(n + N) < agreement, y, 1 - y)
    return y[:n], f[:n], f[n:]


def test_lambda_zero_is_the_classical_interval():
    y, f, f_all = judged(200, 2000)
    result = ppi_mean(y, f, f_all, confidence=0.95, lam=0)
    z = norm.ppf(0.975)
    half = z * y.std() / np.sqrt(y.size)
    assert result.human_anchored.estimate == pytest.approx(y.mean())
    assert (result.human_anchored.low, result.human_anchored.high) == pytest.approx((y.mean() - half, y.mean() + half))
    assert (result.classical.low, result.classical.high) == pytest.approx((y.mean() - half, y.mean() + half))


def test_lambda_one_is_the_textbook_ppi_interval():
    y, f, f_all = judged(150, 3000, agreement=0.8, seed=1)
    result = ppi_mean(y, f, f_all, confidence=0.9, lam=1)
    estimate = f_all.mean() + (y - f).mean()
    se = np.sqrt(f_all.var() / f_all.size + (y - f).var() / y.size)
    z = norm.ppf(0.95)
    assert result.human_anchored.estimate == pytest.approx(estimate)
    assert (result.human_anchored.low, result.human_anchored.high) == pytest.approx((estimate - z * se,
                                                                                     estimate + z * se))


def test_tuned_lambda_and_interval_are_ppi_python_s_at_the_level_asked():
    y, f, f_all = judged(120, 1500, agreement=0.85, seed=2)
    result = ppi_mean(y, f, f_all, confidence=0.95)
    low, high = ppi_mean_ci(y, f, f_all, alpha=0.05)
    assert (result.human_anchored.low, result.human_anchored.high) == pytest.approx((low[0], high[0]))
    assert result.human_anchored.estimate == pytest.approx(float(ppi_mean_pointestimate(y, f, f_all)[0]))
    assert 0 < result.lam <= 1 and result.n == 120 and result.N == 120 + 1500
    # ppi-python's own default level is 90%: ours was not it
    low90, high90 = ppi_mean_ci(y, f, f_all)
    assert result.human_anchored.width > high90[0] - low90[0]
    assert result.effective_n == pytest.approx(120 * (result.classical.width / result.human_anchored.width) ** 2)


def test_coverage_at_95_percent_over_2000_repetitions_and_narrower_than_classical():
    p, covered, narrower, classical_covered = 0.7, 0, 0, 0
    repetitions = 2000
    for seed in range(repetitions):
        y, f, f_all = judged(100, 1000, p=p, agreement=0.9, seed=seed)
        result = ppi_mean(y, f, f_all, confidence=0.95)
        covered += result.human_anchored.low <= p <= result.human_anchored.high
        classical_covered += result.classical.low <= p <= result.classical.high
        narrower += result.human_anchored.width < result.classical.width
    assert 0.93 <= covered / repetitions <= 0.97
    assert 0.92 <= classical_covered / repetitions <= 0.97
    assert narrower / repetitions > 0.95


def test_items_drawn_with_unequal_probabilities_give_the_design_based_estimate_and_cover():
    from metrics.prediction_powered import active_mean, inclusion_probabilities, poisson_draw

    rng = np.random.default_rng(4)
    N = 2000
    y_all = (rng.random(N) < 0.6).astype(float)
    unsure = rng.random(N) < 0.3
    f_all = np.where(rng.random(N) < np.where(unsure, 0.6, 0.97), y_all, 1 - y_all)
    pi = inclusion_probabilities(np.where(unsure, 1.0, 0.1), budget=200, uniform_share=0.2)
    drawn = poisson_draw(pi, 1)
    result = ppi_mean(y_all[drawn], f_all[drawn], f_all[~drawn], confidence=0.95, inclusion_probabilities=pi[drawn])
    lam, w = result.lam, 1 / pi[drawn]
    residual = y_all[drawn] - lam * f_all[drawn]
    hajek = (w * residual).sum() / w.sum()
    assert result.weighted and result.human_anchored.estimate == pytest.approx(lam * f_all.mean() + hajek)
    assert result.classical.estimate == pytest.approx((w * y_all[drawn]).sum() / w.sum())
    assert result.human_anchored.width == pytest.approx(
        2 * norm.ppf(0.975) * np.sqrt(((residual - hajek) ** 2 * (1 - pi[drawn]) * w ** 2).sum()) / w.sum())
    covered, narrower, target = 0, 0, y_all.mean()
    for seed in range(2000):
        drawn = poisson_draw(pi, seed + 10)
        r = active_mean(y_all[drawn], f_all[drawn], f_all, pi[drawn], confidence=0.95)
        covered += r.human_anchored.low <= target <= r.human_anchored.high
        narrower += r.human_anchored.width < r.classical.width
    assert 0.93 <= covered / 2000 <= 0.97 and narrower / 2000 > 0.95


def test_the_planner_reaches_the_width_it_promises():
    y, f, f_all = judged(60, 3000, agreement=0.9, seed=5)
    now = ppi_mean(y, f, f_all, confidence=0.95)
    plan = plan_labels(y, f, f_all, target_width=0.05, confidence=0.95)
    assert plan.width_now == pytest.approx(now.human_anchored.width, rel=1e-6)
    assert plan.n_needed > 60 and plan.more_needed == plan.n_needed - 60
    assert plan.classical_n_needed > plan.n_needed  # the judge saves labels when it agrees
    # drawing that many labels from the same population reaches about that width
    y2, f2, f_all2 = judged(plan.n_needed, 3000, agreement=0.9, seed=6)
    assert ppi_mean(y2, f2, f_all2, confidence=0.95).human_anchored.width == pytest.approx(0.05, rel=0.15)
    wide = plan_labels(y, f, f_all, target_width=0.5, confidence=0.95)
    assert wide.more_needed == 0
    assert plan_labels(y, f, f_all, target_width=1e-4, confidence=0.95).n_needed is None


def test_width_curve_uses_nested_subsets_up_to_every_label():
    y, f, f_all = judged(200, 2000, seed=7)
    points = width_curve(y, f, f_all, confidence=0.95)
    assert points[0].n == 30 and points[-1].n == 200
    assert points[-1].classical == pytest.approx(classical_mean(y, 0.95).width)
    assert all(p.human_anchored < p.classical for p in points)


def test_inclusion_probabilities_add_up_to_the_budget_and_stay_positive():
    from metrics.prediction_powered import inclusion_probabilities, poisson_draw

    u = np.r_[np.zeros(50), np.linspace(0.1, 1, 50), [50.0]]
    pi = inclusion_probabilities(u, budget=30, uniform_share=0.2)
    assert pi.sum() == pytest.approx(30) and pi.max() == 1.0 and pi.min() > 0
    # the uniform part: every item gets at least budget x share / N before capping
    assert pi[:50] == pytest.approx(np.full(50, pi[0])) and pi[0] >= 30 * 0.2 / 101 - 1e-12
    assert (np.diff(pi[50:100]) >= 0).all()  # more uncertain, more likely drawn
    assert inclusion_probabilities(u, budget=30, uniform_share=1.0) == pytest.approx(np.full(101, 30 / 101))
    assert inclusion_probabilities(u, budget=500, uniform_share=0.2) == pytest.approx(np.ones(101))
    draws = np.array([poisson_draw(pi, seed) for seed in range(4000)])
    assert draws.mean(axis=0) == pytest.approx(pi, abs=0.03)
    assert (poisson_draw(pi, "7:active") == poisson_draw(pi, "7:active")).all()


def test_a_judge_that_never_varies_gets_lambda_zero_not_nan():
    y = np.r_[np.ones(40), np.zeros(10)]
    result = ppi_mean(y, np.ones(50), np.ones(500), confidence=0.95)
    assert result.lam == 0.0 and result.human_anchored.low == pytest.approx(result.classical.low)


# ---------------------------------------------------------------- a labelled item is never counted twice

def test_every_item_labelled_gives_exactly_the_classical_interval():
    y, f, _ = judged(120, 0, agreement=0.9, seed=11)
    result = ppi_mean(y, f, [], confidence=0.95)
    classical = classical_mean(y, 0.95)
    assert result.n == result.N == 120 and result.lam == 0
    assert result.human_anchored == result.classical == classical
    assert result.effective_n == 120 and result.method.startswith("classical, every item labelled")
    # one judge-only item carries no variance of its own: still the classical interval
    assert ppi_mean(y, f, [1.0], confidence=0.95).human_anchored == classical


def test_judge_only_items_are_ppi_python_s_second_sample():
    y, f, f_unl = judged(60, 60, agreement=0.85, seed=12)
    result = ppi_mean(y, f, f_unl, confidence=0.95)
    low, high = ppi_mean_ci(y, f, f_unl, alpha=0.05)
    assert (result.human_anchored.low, result.human_anchored.high) == pytest.approx((low[0], high[0]))
    assert result.N == 120 and "independent samples" in result.method


def _coverage(n, N, repetitions, p=0.7, agreement=0.9):
    covered = 0
    for seed in range(repetitions):
        y, f, f_unl = judged(n, N - n, p=p, agreement=agreement, seed=1000 + seed)
        result = ppi_mean(y, f, f_unl, confidence=0.95)
        covered += result.human_anchored.low <= p <= result.human_anchored.high
    return covered / repetitions


@pytest.mark.parametrize("n, N", [(150, 150), (150, 300)])
def test_coverage_at_half_and_all_items_labelled_fast(n, N):
    assert 0.92 <= _coverage(n, N, 300) <= 0.98


@pytest.mark.slow
@pytest.mark.parametrize("n, N", [(120, 120), (120, 240), (200, 300)])
def test_coverage_at_half_and_all_items_labelled_over_2000_repetitions(n, N):
    assert 0.93 <= _coverage(n, N, 2000) <= 0.97


# ---------------------------------------------------------------- the planner

def test_the_planner_refuses_a_pilot_without_disagreement_and_never_plans_below_two():
    y = np.r_[np.ones(12), np.zeros(4)]
    plan = plan_labels(y, y, np.r_[np.ones(80), np.zeros(20)], target_width=0.9, confidence=0.95)
    assert plan.refused and "agree on all 16" in plan.refused and plan.n_needed is None
    f = y.copy()
    f[0] = 0
    wide = plan_labels(y, f, np.r_[np.ones(80), np.zeros(20)], target_width=5.0, confidence=0.95)
    assert wide.refused is None and wide.n_needed == 2 and wide.classical_n_needed == 2 and wide.more_needed == 0
    assert plan_labels(np.ones(10), np.r_[np.ones(9), 0.0], np.ones(50), target_width=0.5,
                       confidence=0.95).refused.startswith("the people's answers are the same")


def test_the_planner_computes_the_report_s_interval_the_same_way():
    rng = np.random.default_rng(21)
    y = (rng.random(16) < 0.7).astype(float)
    f = np.where(rng.random(16) < 0.8, y, 1 - y)
    f_unl = (rng.random(184) < 0.7).astype(float)
    now = ppi_mean(y, f, f_unl, confidence=0.95)
    width = now.human_anchored.width
    plan = plan_labels(y, f, f_unl, target_width=width * (1 + 1e-9), confidence=0.95)
    assert plan.width_now == pytest.approx(width, rel=1e-12) and plan.lam_now == pytest.approx(now.lam)
    assert plan.n_needed <= 16  # its own curve passes through the width reported now
    assert plan_labels(y, f, f_unl, target_width=width * (1 - 1e-6), confidence=0.95).n_needed > 16
    assert "about half" in plan.assumption


def test_the_planned_number_reaches_the_width_about_half_the_time():
    """A pilot of 40 whose shares are exactly the population's (75% right, the judge agreeing on 90% of each kind)
    and 360 judge-only items: campaigns that label the number planned reach the target width about half the
    time."""
    p, agreement, total = 0.75, 0.9, 400
    y = np.r_[np.ones(30), np.zeros(10)]
    f = np.r_[np.ones(27), np.zeros(3), np.zeros(9), np.ones(1)]
    f_unl = np.r_[np.ones(252), np.zeros(108)]  # the judge says "right" on 0.75 x 0.9 + 0.25 x 0.1 = 70%
    plan = plan_labels(y, f, f_unl, target_width=0.12, confidence=0.95)
    assert plan.refused is None and 40 < plan.n_needed < total
    reached = 0
    for seed in range(300):
        y2, f2, f_unl2 = judged(plan.n_needed, total - plan.n_needed, p=p, agreement=agreement, seed=500 + seed)
        reached += ppi_mean(y2, f2, f_unl2, confidence=0.95).human_anchored.width <= 0.12
    assert 0.3 <= reached / 300 <= 0.7, reached / 300  # a median: neither a guarantee nor a long shot


# ---------------------------------------------------------------- coverage at a row's own size

@pytest.mark.parametrize("answers", ["binary", "continuous"])  # multinomial counts, or drawn items
def test_simulated_coverage_is_ppi_mean_s_own_in_the_bootstrap_world(answers):
    from metrics.prediction_powered import simulated_coverage

    rng = np.random.default_rng(41)
    if answers == "binary":
        y = (rng.random(30) < 0.75).astype(float)
        f = np.where(rng.random(30) < 0.85, y, 1 - y)
    else:
        y = rng.exponential(1.0, 30)
        f = y + rng.normal(0, 0.5, 30)
    fast = simulated_coverage(y, f, 30, confidence=0.95, repetitions=4000, seed=1)
    draws, covered, classical = np.random.default_rng(2), 0, 0
    for _ in range(600):  # the same world drawn item by item, each interval from ppi_mean itself
        pick, others = draws.integers(0, 30, 30), draws.integers(0, 30, 30)
        result = ppi_mean(y[pick], f[pick], f[others], confidence=0.95)
        covered += result.human_anchored.low - 1e-12 <= y.mean() <= result.human_anchored.high + 1e-12
        classical += result.classical.low - 1e-12 <= y.mean() <= result.classical.high + 1e-12
    assert fast.human_anchored == pytest.approx(covered / 600, abs=0.035)
    assert fast.classical == pytest.approx(classical / 600, abs=0.035)


def test_large_samples_of_many_values_are_simulated_from_their_normal_limit_and_cover():
    from metrics.prediction_powered import EXACT_DRAWS, simulated_coverage

    rng = np.random.default_rng(43)
    y = rng.normal(3, 1, EXACT_DRAWS + 1000)
    f = y + rng.normal(0, 0.5, y.size)
    coverage = simulated_coverage(y, f, 3 * y.size, confidence=0.95)
    assert 0.93 <= coverage.human_anchored <= 0.97 and 0.93 <= coverage.classical <= 0.97


def test_small_samples_are_flagged_where_coverage_says_so_not_by_a_count():
    from metrics.prediction_powered import COVERAGE_SHORTFALL, coverage_short, simulated_coverage

    # 40 labels (above the count minimum of 30) on a 90% figure: the normal interval covers too rarely
    y = np.r_[np.ones(36), np.zeros(4)]
    f = np.r_[np.ones(34), np.zeros(2), np.zeros(3), np.ones(1)]
    short = coverage_short(simulated_coverage(y, f, 40, confidence=0.95), 0.95)
    assert short and f"below {0.95 - COVERAGE_SHORTFALL:.2f}" in short
    # 300 balanced labels: no flag
    y, f, f_unl = judged(300, 300, p=0.5, seed=42)
    assert coverage_short(simulated_coverage(y, f, 300, confidence=0.95), 0.95) is None
    # no spread: no coverage to read, flagged
    assert coverage_short(simulated_coverage(np.ones(50), np.ones(50), 50, confidence=0.95), 0.95).startswith(
        "no coverage")


def test_active_selection_on_a_budget_of_20_is_flagged_from_its_own_simulation():
    from metrics.prediction_powered import (
        coverage_short,
        inclusion_probabilities,
        poisson_draw,
        simulated_active_coverage,
    )

    rng = np.random.default_rng(4)
    N = 1000
    y_all = (rng.random(N) < 0.6).astype(float)
    unsure = rng.random(N) < 0.3
    f_all = np.where(rng.random(N) < np.where(unsure, 0.6, 0.97), y_all, 1 - y_all)
    for budget, flagged in ((20, True), (400, False)):
        pi = inclusion_probabilities(np.where(unsure, 1.0, 0.1), budget=budget, uniform_share=0.2)
        drawn = poisson_draw(pi, 3)
        coverage = simulated_active_coverage(y_all[drawn], f_all[drawn], pi[drawn], confidence=0.95)
        assert (coverage_short(coverage, 0.95) is not None) == flagged, (budget, coverage)
