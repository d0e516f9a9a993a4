"""The alternative annotator test against the figures its authors publish for their data, and its rules."""
import json

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from metrics.alt_test import EPSILON, alt_test
from tests.conftest import SHARED_DATA

ALTTEST = SHARED_DATA / "alttest"
# alt_test_example.ipynb of the paper's repository (nitaytech/AltTest): data set -> (scoring, epsilon,
# {judge: (winning rate, advantage probability)}), as printed there to two decimals.
PUBLISHED = {
    "wax": ("accuracy", 0.1, {"gemini_flash": (0.38, 0.69), "gemini_pro": (0.50, 0.74), "gpt-4o": (0.50, 0.73),
                              "llama-31": (0.00, 0.57), "gpt-4o-mini": (0.00, 0.59), "mistral-v03": (0.00, 0.50)}),
    "lgbteen": ("accuracy", 0.2, {"gemini_flash": (0.25, 0.71), "gemini_pro": (0.00, 0.67), "gpt-4o": (0.75, 0.77),
                                  "llama-31": (0.00, 0.72), "gpt-4o-mini": (0.75, 0.76),
                                  "mistral-v03": (0.25, 0.75)}),
    "mtbench": ("accuracy", 0.2, {"gemini_flash": (0.00, 0.72), "gemini_pro": (0.00, 0.76), "gpt-4o": (0.00, 0.77),
                                  "llama-31": (0.00, 0.69), "gpt-4o-mini": (0.00, 0.74),
                                  "mistral-v03": (0.00, 0.68)}),
    "framing": ("accuracy", 0.15, {"gemini_flash": (1.00, 0.83), "gemini_pro": (1.00, 0.91), "gpt-4o": (1.00, 0.92),
                                   "llama-31": (0.50, 0.80), "gpt-4o-mini": (1.00, 0.87),
                                   "mistral-v03": (0.25, 0.80)}),
    "cebab_aspects": ("accuracy", 0.1, {"gemini_flash": (0.70, 0.91), "gemini_pro": (0.90, 0.94),
                                        "gpt-4o": (0.90, 0.93), "llama-31": (0.60, 0.89),
                                        "gpt-4o-mini": (0.50, 0.90), "mistral-v03": (0.10, 0.81)}),
    "summeval": ("neg_rmse", 0.2, {"gemini_flash": (0.00, 0.46), "gemini_pro": (0.00, 0.44), "gpt-4o": (0.00, 0.48),
                                   "llama-31": (0.00, 0.58), "gpt-4o-mini": (0.00, 0.54),
                                   "mistral-v03": (0.00, 0.62)}),
    "10k_prompts": ("neg_rmse", 0.15, {"gemini_flash": (0.31, 0.67), "gemini_pro": (0.08, 0.63),
                                       "gpt-4o": (0.69, 0.76), "llama-31": (0.15, 0.67),
                                       "gpt-4o-mini": (0.92, 0.80), "mistral-v03": (0.15, 0.67)}),
    "cebab_stars": ("neg_rmse", 0.1, {"gemini_flash": (0.60, 0.82), "gemini_pro": (0.80, 0.87),
                                      "gpt-4o": (0.90, 0.90), "llama-31": (0.60, 0.85),
                                      "gpt-4o-mini": (0.90, 0.89), "mistral-v03": (0.50, 0.83)}),
    "lesion": ("neg_rmse", 0.15, {"gemini_flash": (0.17, 0.71), "gemini_pro": (1.00, 0.81), "gpt-4o": (0.00, 0.62),
                                  "gpt-4o-mini": (0.67, 0.73)}),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_the_published_winning_rates_and_advantage_probabilities(name):
    folder = ALTTEST / name
    if not (folder / "human_annotations.json").is_file():
        print(f"skipping: the alternative annotator test's data not found at {folder}")
        pytest.skip(f"the alternative annotator test's data not found at {folder} (set HB_SHARED_DATA)")
    human = json.loads((folder / "human_annotations.json").read_text())
    judges = json.loads((folder / "llm_annotations.json").read_text())
    scoring, epsilon, published = PUBLISHED[name]
    for judge, (winning_rate, advantage) in published.items():
        result = alt_test(human, judges[judge], epsilon=epsilon, scoring=scoring)
        published_pair = (winning_rate, advantage)
        assert (round(result.winning_rate, 2), round(result.advantage_probability, 2)) == published_pair, judge
        assert result.passed == (winning_rate >= 0.5)


def small_study(n_items, n_people=3, judge_accuracy=0.9, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_items)
    noisy = lambda accuracy: np.where(rng.random(n_items) < accuracy, truth, rng.integers(0, 3, n_items))  # noqa: E731
    human = {f"p{j}": dict(enumerate(noisy(0.7).tolist())) for j in range(n_people)}
    return human, dict(enumerate(noisy(judge_accuracy).tolist()))


def test_each_annotator_left_out_against_a_test_written_out():
    human, judge = small_study(60)
    result = alt_test(human, judge, annotator_kind="skilled")
    assert result.epsilon == EPSILON["skilled"] == 0.15 and result.n_items == 60
    p_values = []
    for j, answers in human.items():
        others = [h for name, h in human.items() if name != j]
        judge_score = np.array([np.mean([judge[i] == o[i] for o in others]) for i in range(60)])
        own_score = np.array([np.mean([answers[i] == o[i] for o in others]) for i in range(60)])
        w_f, w_h = (judge_score >= own_score).astype(float), (own_score >= judge_score).astype(float)
        p_values.append(stats.ttest_rel(w_h - 0.15, w_f, alternative="less").pvalue)
        row = next(c for c in result.annotators if c.annotator == j)
        assert row.rho_judge == pytest.approx(w_f.mean()) and row.rho_annotator == pytest.approx(w_h.mean())
        assert row.test == "t" and row.p_value == pytest.approx(p_values[-1])
    reject, adjusted, _, _ = multipletests(p_values, alpha=0.05, method="fdr_by")
    assert [c.p_adjusted for c in result.annotators] == pytest.approx(list(adjusted))
    assert result.winning_rate == pytest.approx(np.mean(reject))
    assert result.advantage_probability == pytest.approx(np.mean([c.rho_judge for c in result.annotators]))


@pytest.mark.parametrize("seed", range(4))
def test_people_on_some_items_each_scored_against_the_others_written_out(seed):
    """Each person labels some items (one, two or more people per item, the judge silent on some): W_f and W_h
    from each item's shares of the others matched, as the paper defines them."""
    rng = np.random.default_rng(seed)
    people = [f"p{n}" for n in range(5)]
    human = {p: {i: str(rng.choice(list("ABC"))) for i in range(80) if rng.random() < 0.6} for p in people}
    judge = {i: (None if rng.random() < 0.1 else str(rng.choice(list("ABC")))) for i in range(80)}
    result = alt_test(human, judge, annotator_kind="crowd")
    for row in result.annotators:
        w_f, w_h = [], []
        for i in range(80):
            others = [h[i] for name, h in human.items() if name != row.annotator and i in h]
            if judge[i] is None or i not in human[row.annotator] or not others:
                continue
            judge_share = sum(judge[i] == o for o in others) / len(others)
            own_share = sum(human[row.annotator][i] == o for o in others) / len(others)
            w_f.append(float(judge_share >= own_share))
            w_h.append(float(own_share >= judge_share))
        assert row.n_items == len(w_f) and row.rho_judge == np.mean(w_f) and row.rho_annotator == np.mean(w_h)


def test_fewer_than_thirty_items_take_the_rank_test_and_say_so():
    human, judge = small_study(20, n_people=2, seed=3)
    result = alt_test(human, judge, annotator_kind="crowd")
    assert {c.test for c in result.annotators} == {"wilcoxon"}
    checks = {c["check"]: c for c in result.checks}
    assert not checks["30 or more items per annotator (t-test)"]["met"]
    assert "Wilcoxon" in checks["30 or more items per annotator (t-test)"]["detail"]
    assert not checks["3 or more annotators"]["met"]
    row = result.annotators[0]
    w = alt_test(human, judge, epsilon=0.1)
    assert w.annotators[0].p_value == row.p_value


def test_items_with_one_person_are_left_out_and_nothing_shared_is_undefined():
    result = alt_test({"a": {1: "x", 2: "y"}, "b": {3: "x"}}, {1: "x", 2: "y", 3: "x"}, epsilon=0.1)
    assert result.winning_rate is None and result.undefined_reason
    assert not result.checks[0]["met"]
    with pytest.raises(ValueError):
        alt_test({}, {}, annotator_kind="robot")
