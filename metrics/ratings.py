"""Pairwise arena ratings: win/tie/lose counts, Elo, and Bradley-Terry.

A match is `(model_a, model_b, outcome)` with outcome for model_a: "win", "tie", "lose",
or the score 1, 0.5, 0.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse.csgraph import connected_components

from ._common import Result, check_confidence, percentile_interval, plain
from .bootstrap import resample_indices

Match = tuple[Any, Any, Any]
_SCORES = {"win": 1.0, "tie": 0.5, "lose": 0.0, 1: 1.0, 0.5: 0.5, 0: 0.0}
TIE_RULE = "a tie counts as half a win for each side"


def _normalise(matches: Sequence[Match]) -> list[tuple[Any, Any, float]]:
    out = []
    for match in matches:
        a, b, outcome = match
        if a == b:
            raise ValueError(f"a model cannot play itself: {match!r}")
        if isinstance(outcome, bool) or outcome not in _SCORES:
            raise ValueError(f"outcome must be win/tie/lose or 1/0.5/0, got {outcome!r}")
        out.append((plain(a), plain(b), _SCORES[outcome]))
    return out


@dataclass(frozen=True)
class PairRecord(Result):
    model_a: Any
    model_b: Any
    wins: int  # wins of model_a over model_b
    ties: int
    losses: int
    n: int


def win_tie_lose(outcomes: Sequence[Match]) -> list[PairRecord]:
    """Win/tie/lose counts per model pair, model_a first in sorted order of names."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for a, b, score in _normalise(outcomes):
        if str(b) < str(a):
            a, b, score = b, a, 1.0 - score
        counts[a, b][{1.0: 0, 0.5: 1, 0.0: 2}[score]] += 1
    return [PairRecord(a, b, win, tie, lose, win + tie + lose)
            for (a, b), (win, tie, lose) in sorted(counts.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))]


BOTCHAT_OUTCOMES = ("win", "both", "neither", "lose", "unknown")
# BotChat's outcome for the other model of the same comparison (analyze.py simple_count's cp_map).
BOTCHAT_MIRROR = {"win": "lose", "lose": "win", "both": "both", "neither": "neither", "unknown": "unknown"}
BOTCHAT_SCORE = {"win": 3, "both": 1, "neither": -1, "lose": -3, "unknown": 0}


@dataclass(frozen=True)
class BotChatRecord(Result):
    model: Any
    n: int  # comparisons the model took part in, each order of a pair counted apart, unread answers included
    win: int
    both: int  # the judge found neither conversation AI-written: a good tie
    neither: int  # the judge found both conversations AI-written: a bad tie
    lose: int
    unknown: int  # answers with no Choice line the parser reads: in n, as analyze.py's table keeps them
    win_rate: float
    tie_rate: float  # (both + neither) / n
    lose_rate: float
    not_bad_rate: float  # (win + both) / n
    score: float  # (3 win + both - neither - 3 lose) / n, in [-3, 3]
    n_read: int  # n - unknown: the comparisons whose answer was read
    win_tie_rate: float | None  # (win + both + neither) / n_read, as calc_win_rate; None when none was read


def _check_botchat(outcome):
    if outcome not in BOTCHAT_MIRROR:
        raise ValueError(f"outcome must be one of {BOTCHAT_OUTCOMES}, got {outcome!r}")


def botchat_outcomes(judgements: Sequence[Match]) -> list[BotChatRecord]:
    """BotChat's arena statistics per model (open-compass/BotChat botchat/analyze.py, simple_count and the
    table of `analyze`): each judgement `(model shown first, model shown second, outcome for the first)` with
    outcome win / both / neither / lose / unknown counts for both models (the second gets the mirrored
    outcome); an unknown (unread) answer stays in the denominator of the rates and the score, as analyze.py's
    table keeps every extracted row, and is left out of Win+Tie's, as its calc_win_rate counts only read
    answers; best score first, as the study sorts its table."""
    counts: dict[Any, dict[str, int]] = defaultdict(lambda: dict.fromkeys(BOTCHAT_OUTCOMES, 0))
    for first, second, outcome in judgements:
        _check_botchat(outcome)
        counts[plain(first)][outcome] += 1
        counts[plain(second)][BOTCHAT_MIRROR[outcome]] += 1
    records = []
    for model, c in counts.items():
        n = sum(c.values())
        read = n - c["unknown"]
        records.append(BotChatRecord(model, n, c["win"], c["both"], c["neither"], c["lose"], c["unknown"],
                                     c["win"] / n, (c["both"] + c["neither"]) / n, c["lose"] / n,
                                     (c["win"] + c["both"]) / n, sum(BOTCHAT_SCORE[k] * v for k, v in c.items()) / n,
                                     read, (c["win"] + c["both"] + c["neither"]) / read if read else None))
    return sorted(records, key=lambda r: (-r.score, str(r.model)))


@dataclass(frozen=True)
class BotChatVersus(Result):
    model: Any
    opponent: Any
    n: int  # comparisons of the two, both orders of showing, unread answers included
    n_read: int  # of them, the answers read: the denominator of every rate here
    unknown: int
    win: int  # of the model
    tie: int  # both or neither
    lose: int
    win_rate: float | None
    tie_rate: float | None
    win_tie_rate: float | None  # (win + tie) / n_read; None when no answer was read
    # The same over the orders of showing calc_win_rate walks: only those in which the first model won at least once
    # (its loop runs over the keys of its `win` counter); None when it walks none of the two orders.
    win_tie_rate_study_walk: float | None = None
    n_read_study_walk: int = 0


def botchat_versus(judgements: Sequence[Match]) -> list[BotChatVersus]:
    """BotChat's one-against-one rates (botchat/analyze.py calc_win_rate: its `win` and `wintie` tables, the
    Win+Tie against a reference model of the paper's Table 2): for every two models that met, the model's wins,
    ties (both, neither) and losses against the opponent over the comparisons in either order of showing, over
    the read answers only (an unknown answer counts in neither numerator nor denominator; `unknown` says how
    many). One row per ordered pair (model, opponent), sorted by the names. Beside it, `win_tie_rate_study_walk`:
    the rate as calc_win_rate itself adds it up, walking only the orders of showing in which the model shown first
    won at least once (an order the first model never won drops out, its ties and losses with it)."""
    counts: dict[tuple, dict[str, int]] = defaultdict(lambda: {"win": 0, "tie": 0, "lose": 0, "unknown": 0})
    # Per order of showing (first, second): the first model's read outcomes, as calc_win_rate keys them "A;B".
    shown: dict[tuple, dict[str, int]] = defaultdict(lambda: {"win": 0, "tie": 0, "lose": 0})
    tie = {"both": "tie", "neither": "tie"}
    for first, second, outcome in judgements:
        _check_botchat(outcome)
        first, second = plain(first), plain(second)
        counts[first, second][tie.get(outcome, outcome)] += 1
        counts[second, first][tie.get(BOTCHAT_MIRROR[outcome], BOTCHAT_MIRROR[outcome])] += 1
        if outcome != "unknown":
            shown[first, second][tie.get(outcome, outcome)] += 1
    walked: dict[tuple, dict[str, int]] = defaultdict(lambda: {"win": 0, "tie": 0, "read": 0})
    for (first, second), c in shown.items():
        if c["win"]:  # calc_win_rate's `for k in win`: an order the first model never won is not walked
            read = c["win"] + c["tie"] + c["lose"]
            for model, wins in ((first, c["win"]), (second, c["lose"])):
                opponent = second if model == first else first
                walked[model, opponent]["win"] += wins
                walked[model, opponent]["tie"] += c["tie"]
                walked[model, opponent]["read"] += read
    rows = []
    for (model, opponent), c in sorted(counts.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        read = c["win"] + c["tie"] + c["lose"]
        share = {k: c[k] / read if read else None for k in ("win", "tie")}
        w = walked.get((model, opponent), {"win": 0, "tie": 0, "read": 0})
        rows.append(BotChatVersus(model, opponent, read + c["unknown"], read, c["unknown"], c["win"], c["tie"],
                                  c["lose"], share["win"], share["tie"],
                                  (c["win"] + c["tie"]) / read if read else None,
                                  (w["win"] + w["tie"]) / w["read"] if w["read"] else None, w["read"]))
    return rows


@dataclass(frozen=True)
class EloRatings(Result):
    ratings: dict  # model -> rating after the last match
    n_matches: int
    start: float
    scale: float
    k: float
    order: str = "sequential, matches applied in the order given: another order gives other ratings"


def elo(matches: Sequence[Match], start: float = 1000.0, scale: float = 400.0, k: float = 32.0) -> EloRatings:
    """Sequential Elo: expected score 1 / (1 + 10^((R_b - R_a) / scale)), update k * (S - E)."""
    ratings: dict[Any, float] = {}
    games = _normalise(matches)
    for a, b, score in games:
        ra, rb = ratings.setdefault(a, float(start)), ratings.setdefault(b, float(start))
        expected = 1.0 / (1.0 + 10.0 ** ((rb - ra) / scale))
        ratings[a] = ra + k * (score - expected)
        ratings[b] = rb - k * (score - expected)
    return EloRatings(ratings, len(games), float(start), float(scale), float(k))


@dataclass(frozen=True)
class EloOverOrders(Result):
    mean: dict  # model -> mean rating over the shuffled orders
    std: dict  # model -> sample standard deviation (ddof 1) over them; None with one order
    n_orders: int
    n_matches: int
    seed: int | None
    order: str = "the matches shuffled with numpy's default_rng(seed), one permutation per order"


def elo_over_orders(matches: Sequence[Match], n_orders: int = 100, seed: int | None = 0, start: float = 1000.0,
                    scale: float = 400.0, k: float = 32.0) -> EloOverOrders:
    """Sequential Elo (`elo`) run on `n_orders` seeded shuffles of the matches: the mean and spread of each
    model's rating, so that a reading does not hang on the one order the matches came in."""
    if n_orders < 1:
        raise ValueError("n_orders must be at least 1")
    matches = list(matches)
    rng = np.random.default_rng(seed)
    runs = [elo([matches[i] for i in rng.permutation(len(matches))], start, scale, k).ratings
            for _ in range(n_orders)]
    models = sorted(runs[0], key=str)
    mean = {m: float(np.mean([r[m] for r in runs])) for m in models}
    std = {m: float(np.std([r[m] for r in runs], ddof=1)) if n_orders > 1 else None for m in models}
    return EloOverOrders(mean, std, n_orders, len(matches), seed)


@dataclass(frozen=True)
class BradleyTerry(Result):
    scores: dict  # model -> Elo-like score; None values when the fit does not exist
    anchor: str  # what fixes the scale's origin
    n_matches: int
    iterations: int
    converged: bool
    scale: float
    ties: str = TIE_RULE
    method: str = "maximum likelihood, MM algorithm (Hunter 2004); independent of match order"
    undefined_reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.undefined_reason is None


def _win_matrix(games: list[tuple[Any, Any, float]]) -> tuple[list[Any], np.ndarray]:
    models = list(dict.fromkeys(m for a, b, _ in games for m in (a, b)))
    index = {m: i for i, m in enumerate(models)}
    wins = np.zeros((len(models), len(models)))  # wins[i, j]: win credit of i against j
    for a, b, score in games:
        wins[index[a], index[b]] += score
        wins[index[b], index[a]] += 1.0 - score
    return models, wins


def _why_no_fit(models: list[Any], wins: np.ndarray) -> str | None:
    """The MLE exists iff every model group scored at least once against the rest (Ford 1957)."""
    played = wins + wins.T
    if connected_components(played > 0, directed=False)[0] > 1:
        return "some models never met, directly or through others: their scores cannot be compared"
    n_comp, comp = connected_components(wins > 0, directed=True, connection="strong")
    if n_comp == 1:
        return None
    for c in range(n_comp):
        inside = comp == c
        if not wins[np.ix_(~inside, inside)].any():  # nobody outside ever scored against them
            group = [models[i] for i in np.flatnonzero(inside)]
            return (f"the maximum-likelihood fit does not exist: {group} never lost or tied "
                    "against the other models, so their scores are unbounded")
    return "the maximum-likelihood fit does not exist"


def bradley_terry(
    matches: Sequence[Match],
    anchor: Any = None,
    base: float = 1000.0,
    scale: float = 400.0,
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> BradleyTerry:
    """Bradley-Terry strengths by maximum likelihood, on an Elo-like scale.

    score_i = base + scale * log10(p_i) shifted so that `anchor` scores `base` (default: the
    mean score is `base`); P(i beats j) = 1 / (1 + 10^((s_j - s_i) / scale)).
    """
    games = _normalise(matches)
    models, wins = _win_matrix(games)
    if anchor is not None and anchor not in models:
        raise ValueError(f"anchor {anchor!r} played no match")
    anchor_text = f"{anchor!r} fixed at {base:g}" if anchor is not None else f"mean score fixed at {base:g}"

    def undefined(reason: str) -> BradleyTerry:
        return BradleyTerry({m: None for m in models}, anchor_text, len(games), 0, False, scale,
                            undefined_reason=reason)

    if not games:
        return undefined("no matches")
    reason = _why_no_fit(models, wins)
    if reason:
        return undefined(reason)

    played = wins + wins.T
    total_wins = wins.sum(axis=1)
    log_p = np.zeros(len(models))
    converged, iteration = False, 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 -- the count is read after the loop
        p = np.exp(log_p)
        # Hunter (2004) MM update: p_i = W_i / sum_j n_ij / (p_i + p_j)
        denom = (played / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.log(total_wins / denom)
        new -= new.mean()  # strengths are defined up to a common factor
        step = np.max(np.abs(new - log_p))
        log_p = new
        if step < tol:
            converged = True
            break
    scores = base + scale * log_p / np.log(10)
    scores += base - (scores[models.index(anchor)] if anchor is not None else scores.mean())
    return BradleyTerry({m: float(s) for m, s in zip(models, scores, strict=True)}, anchor_text, len(games),
                        iteration, converged, scale,
                        undefined_reason=None if converged else f"no convergence in {max_iter} iterations")


@dataclass(frozen=True)
class ScoreInterval(Result):
    model: Any
    score: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class BradleyTerryBootstrap(Result):
    intervals: list
    anchor: str
    confidence: float
    n_resamples: int
    n_undefined: int  # resamples skipped: no fit, or a model missing from the resample
    seed: int | None
    method: str = "percentile bootstrap over matches"
    undefined_reason: str | None = None


def bradley_terry_bootstrap(
    matches: Sequence[Match],
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    anchor: Any = None,
    base: float = 1000.0,
    scale: float = 400.0,
) -> BradleyTerryBootstrap:
    """Bradley-Terry scores with percentile intervals from resampling matches."""
    check_confidence(confidence)
    matches = list(matches)
    fit = bradley_terry(matches, anchor=anchor, base=base, scale=scale)
    models = list(fit.scores)
    samples: dict[Any, list[float]] = {m: [] for m in models}
    undefined = 0
    if matches:
        for idx in resample_indices(len(matches), n_resamples, seed):
            sample = [matches[i] for i in idx]
            if len({m for a, b, _ in sample for m in (a, b)}) < len(models):
                undefined += 1  # a model dropped out of this resample
                continue
            refit = bradley_terry(sample, anchor=anchor, base=base, scale=scale)
            if not refit.defined:
                undefined += 1
                continue
            for m in models:
                samples[m].append(refit.scores[m])
    else:
        undefined = n_resamples
    intervals = [ScoreInterval(m, fit.scores[m], *percentile_interval(samples[m], confidence)) for m in models]
    reason = fit.undefined_reason or (None if undefined < n_resamples else "no resample could be fitted")
    return BradleyTerryBootstrap(intervals, fit.anchor, confidence, n_resamples, undefined, seed,
                                 undefined_reason=reason)
