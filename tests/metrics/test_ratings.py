import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from metrics.ratings import bradley_terry, bradley_terry_bootstrap, elo, win_tie_lose

FAST = settings(max_examples=40, deadline=None)
MODELS = ["gpt", "llama", "qwen", "human", "glm"]


def test_win_tie_lose_counts_per_pair():
    matches = [("b", "a", "win"), ("a", "b", "win"), ("a", "b", "tie"), ("a", "c", 0), ("c", "a", 0.5)]
    records = {(r.model_a, r.model_b): (r.wins, r.ties, r.losses, r.n) for r in win_tie_lose(matches)}
    assert records == {("a", "b"): (1, 1, 1, 3), ("a", "c"): (0, 1, 1, 2)}
    with pytest.raises(ValueError):
        win_tie_lose([("a", "a", "win")])
    with pytest.raises(ValueError):
        win_tie_lose([("a", "b", "draw")])


def test_elo_hand_computed_two_matches():
    # Match 1, A beats B at 1000 each: E = 0.5, A = 1000 + 32 * 0.5 = 1016, B = 984.
    # Match 2, A ties B: E_A = 1 / (1 + 10^(-32/400)) = 1 / (1 + 0.831763771) = 0.545953...
    #   A = 1016 + 32 * (0.5 - 0.545953) = 1014.529502, B = 984 + 32 * 0.045953 = 985.470498.
    result = elo([("A", "B", "win"), ("A", "B", "tie")])
    assert result.ratings["A"] == pytest.approx(1014.5295, abs=1e-3)
    assert result.ratings["B"] == pytest.approx(985.4705, abs=1e-3)
    assert "order given" in result.order and result.n_matches == 2


def test_elo_depends_on_order_but_bradley_terry_does_not():
    matches = [("A", "B", "win"), ("B", "C", "win"), ("C", "A", "win"), ("A", "B", "lose"), ("A", "C", "win")]
    assert elo(matches).ratings != elo(matches[::-1]).ratings
    forward, backward = bradley_terry(matches).scores, bradley_terry(matches[::-1]).scores
    assert forward == pytest.approx(backward, abs=1e-6)


# A tie between neighbours in a ring keeps every model beaten-and-beating: the MLE exists.
ring = [(MODELS[i], MODELS[(i + 1) % len(MODELS)], "tie") for i in range(len(MODELS))]
matches_strategy = st.lists(
    st.tuples(st.sampled_from(MODELS), st.sampled_from(MODELS), st.sampled_from(["win", "tie", "lose"]))
    .filter(lambda m: m[0] != m[1]), max_size=40).map(lambda extra: ring + extra)


def independent_fit(matches):
    """Bradley-Terry MLE by direct minimisation of the negative log-likelihood."""
    index = {m: i for i, m in enumerate(MODELS)}
    credit = {"win": 1.0, "tie": 0.5, "lose": 0.0}
    rows = [(index[a], index[b], credit[o]) for a, b, o in matches]

    def nll(free):
        theta = np.concatenate([[0.0], free])
        return -sum(s * (theta[i] - np.logaddexp(theta[i], theta[j])) +
                    (1 - s) * (theta[j] - np.logaddexp(theta[i], theta[j])) for i, j, s in rows)

    fit = minimize(nll, np.zeros(len(MODELS) - 1), method="BFGS", options={"gtol": 1e-9})
    return np.concatenate([[0.0], fit.x])


@FAST
@given(matches_strategy)
def test_bradley_terry_is_the_maximum_likelihood_fit(matches):
    result = bradley_terry(matches)
    assert result.defined and result.converged
    theta = independent_fit(matches)
    ours = np.array([result.scores[m] for m in MODELS])
    expected = theta * 400 / math.log(10)
    assert ours - ours.mean() == pytest.approx(expected - expected.mean(), abs=0.05)
    assert ours.mean() == pytest.approx(1000)
    # Score equations of the MLE: each model's expected win credit equals its actual credit.
    for m in MODELS:
        actual = expected_credit = 0.0
        for a, b, o in matches:
            if m in (a, b):
                other = b if m == a else a
                p = 1 / (1 + 10 ** ((result.scores[other] - result.scores[m]) / 400))
                s = {"win": 1.0, "tie": 0.5, "lose": 0.0}[o]
                actual += s if m == a else 1 - s
                expected_credit += p
        assert expected_credit == pytest.approx(actual, abs=1e-6)


@FAST
@given(matches_strategy, st.randoms(use_true_random=False))
def test_bradley_terry_ignores_order_and_side(matches, rnd):
    shuffled = matches[:]
    rnd.shuffle(shuffled)
    flip = {"win": "lose", "lose": "win", "tie": "tie"}
    swapped = [(b, a, flip[o]) if rnd.random() < 0.5 else (a, b, o) for a, b, o in shuffled]
    base = bradley_terry(matches).scores
    assert bradley_terry(swapped).scores == pytest.approx(base, abs=1e-6)


def test_anchor_fixes_one_model_and_keeps_differences():
    matches = ring + [("gpt", "llama", "win"), ("gpt", "qwen", "win"), ("human", "gpt", "win")]
    mean_fixed = bradley_terry(matches).scores
    anchored = bradley_terry(matches, anchor="human").scores
    assert anchored["human"] == pytest.approx(1000)
    shift = anchored["human"] - mean_fixed["human"]
    assert {m: s - shift for m, s in anchored.items()} == pytest.approx(mean_fixed)
    with pytest.raises(ValueError, match="anchor"):
        bradley_terry(matches, anchor="nobody")


def test_bradley_terry_explains_when_no_fit_exists():
    unbeaten = bradley_terry([("a", "b", "win"), ("a", "c", "win"), ("b", "c", "tie")])
    assert not unbeaten.defined and "['a'] never lost or tied" in unbeaten.undefined_reason
    assert unbeaten.scores == {"a": None, "b": None, "c": None}
    apart = bradley_terry([("a", "b", "tie"), ("c", "d", "tie")])
    assert "never met" in apart.undefined_reason
    assert bradley_terry([]).undefined_reason == "no matches"


def test_bootstrap_intervals_and_skipped_resamples():
    even = [("a", "b", "win"), ("b", "a", "win")]
    result = bradley_terry_bootstrap(even, n_resamples=1000, seed=4)
    # A resample of two matches has no fit when both are the same match: probability 1/2.
    assert 400 < result.n_undefined < 600
    assert result == bradley_terry_bootstrap(even, n_resamples=1000, seed=4)
    rng = random.Random(0)
    matches = ring + [(a, b, "win") for a, b in (rng.sample(MODELS[:3], 2) for _ in range(60))]
    matches += [("gpt", "glm", "win")] * 20 + [("glm", "gpt", "win")] * 5
    boot = bradley_terry_bootstrap(matches, n_resamples=200, seed=1)
    fit = bradley_terry(matches)
    for interval in boot.intervals:
        assert interval.score == fit.scores[interval.model]
        assert interval.low < interval.score < interval.high
    anchored = bradley_terry_bootstrap(matches, n_resamples=50, anchor="gpt")
    gpt = next(i for i in anchored.intervals if i.model == "gpt")
    assert gpt.low == pytest.approx(1000) and gpt.high == pytest.approx(1000)


def test_elo_over_orders_is_elo_on_each_seeded_shuffle_then_mean_and_sd():
    from metrics import elo_over_orders
    matches = [("a", "b", "win"), ("b", "c", "tie"), ("a", "c", "lose"), ("c", "b", "win"), ("a", "b", "win")]
    result = elo_over_orders(matches, n_orders=7, seed=3)
    rng = np.random.default_rng(3)
    runs = [elo([matches[i] for i in rng.permutation(len(matches))]).ratings for _ in range(7)]
    for model in "abc":
        values = [r[model] for r in runs]
        assert result.mean[model] == pytest.approx(np.mean(values))
        assert result.std[model] == pytest.approx(np.std(values, ddof=1))
    assert len({tuple(sorted(r.items())) for r in runs}) > 1  # the order moves sequential Elo
    assert sum(result.mean.values()) == pytest.approx(3000)  # every update is zero-sum
    single = elo_over_orders(matches, n_orders=1, seed=3)
    first = elo([matches[i] for i in np.random.default_rng(3).permutation(len(matches))]).ratings
    assert single.mean == pytest.approx(first) and single.std == {m: None for m in "abc"}
    with pytest.raises(ValueError):
        elo_over_orders(matches, n_orders=0)


def test_botchat_win_tie_leaves_unread_answers_out_of_its_denominator_as_calc_win_rate():
    """open-compass/BotChat botchat/analyze.py: the table of `analyze` (simple_count) keeps an unread answer
    ("unknown") in the denominator of its rates and score, while calc_win_rate (the Win and Win+Tie tables, the
    paper's Table 2) adds up win, tie and lose only. Worked by hand from those two functions."""
    from metrics import botchat_outcomes, botchat_versus

    judgements = [("x", "y", "win"), ("x", "y", "both"), ("y", "x", "win"), ("y", "x", "lose"),
                  ("y", "x", "unknown")]
    x = {r.model: r for r in botchat_outcomes(judgements)}["x"]
    assert (x.n, x.win, x.both, x.lose, x.unknown, x.n_read) == (5, 2, 1, 1, 1, 4)
    assert x.win_rate == pytest.approx(2 / 5) and x.score == pytest.approx((6 + 1 - 3) / 5)  # unknown counted
    assert x.win_tie_rate == pytest.approx(3 / 4)  # unknown left out
    # calc_win_rate: tot[x, y] = 2 (key "x;y") + 2 (key "y;x"); cnt[x, y] = win["x;y"] + lose["y;x"] = 2.
    versus = {(r.model, r.opponent): r for r in botchat_versus(judgements)}
    xy, yx = versus["x", "y"], versus["y", "x"]
    assert (xy.n, xy.n_read, xy.unknown, xy.win, xy.tie, xy.lose) == (5, 4, 1, 2, 1, 1)
    assert (xy.win_rate, xy.tie_rate, xy.win_tie_rate) == (0.5, 0.25, 0.75)
    assert (yx.win, yx.tie, yx.lose, yx.win_tie_rate) == (1, 1, 2, 0.5)
    nothing_read = botchat_versus([("x", "y", "unknown")])[0]
    assert (nothing_read.n, nothing_read.n_read, nothing_read.win_tie_rate) == (1, 0, None)
    assert botchat_outcomes([("x", "y", "unknown")])[0].win_tie_rate is None


def test_botchat_win_tie_by_the_studys_walk_drops_an_order_of_showing_its_first_model_never_won():
    """calc_win_rate walks the keys of its `win` counter: an order of showing ("A;B") in which A never won adds
    nothing, its ties and losses included. Worked by hand: "x;y" has a win, "y;x" none (a tie and a loss of y)."""
    from metrics import botchat_versus

    judgements = [("x", "y", "win"), ("x", "y", "lose"), ("x", "y", "both"),
                  ("y", "x", "neither"), ("y", "x", "lose"), ("y", "x", "unknown")]
    versus = {(r.model, r.opponent): r for r in botchat_versus(judgements)}
    xy, yx = versus["x", "y"], versus["y", "x"]
    # Every read order: x won 1 + 1 (y's loss), tied 2, lost 1, of 5.
    assert (xy.win, xy.tie, xy.lose, xy.n_read) == (2, 2, 1, 5) and xy.win_tie_rate == pytest.approx(4 / 5)
    # The study's walk: only "x;y" (win, lose, both): x 1 win + 1 tie of 3, y 1 win + 1 tie of 3.
    assert (xy.n_read_study_walk, xy.win_tie_rate_study_walk) == (3, pytest.approx(2 / 3))
    assert (yx.n_read_study_walk, yx.win_tie_rate_study_walk) == (3, pytest.approx(2 / 3))
    assert yx.win_tie_rate == pytest.approx(3 / 5)
    never = {(r.model, r.opponent): r for r in botchat_versus([("x", "y", "lose"), ("x", "y", "both")])}
    assert never["x", "y"].win_tie_rate_study_walk is None and never["y", "x"].win_tie_rate_study_walk is None
