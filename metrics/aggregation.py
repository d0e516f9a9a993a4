"""Turning several people's answers into one: majority vote, expert panels, rater means."""
from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

from ._common import Result, is_missing, is_number, plain, plain_present, present

TieRule = Literal["none", "first", "lowest", "random"]
TIE_RULES = {
    "none": "a tie gives no label",
    "first": "a tie goes to the tied label given first",
    "lowest": "a tie goes to the lowest tied label",
    "random": "a tie goes to a tied label drawn at random (seeded)",
}


@dataclass(frozen=True)
class MajorityVote(Result):
    label: Any  # None when there are no votes, or on a tie under tie_rule "none"
    votes: dict  # label -> count, most votes first
    margin: int  # top count minus runner-up count (0 on a tie)
    is_tie: bool
    tie_rule: str
    tie_rule_text: str
    n_votes: int


def majority_vote(labels: Sequence[Any], tie_rule: TieRule = "none", seed: int | None = None) -> MajorityVote:
    """Most frequent label among the non-missing ones, with the tie rule stated."""
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {sorted(TIE_RULES)}")
    votes = Counter(plain_present(labels))
    ranked = votes.most_common()  # stable: equal counts keep the order first given
    if not ranked:
        return MajorityVote(None, {}, 0, False, tie_rule, TIE_RULES[tie_rule], 0)
    top = ranked[0][1]
    tied = [label for label, count in ranked if count == top]
    runner_up = next((count for _, count in ranked if count < top), 0)
    is_tie = len(tied) > 1
    if not is_tie:
        label = tied[0]
    elif tie_rule == "none":
        label = None
    elif tie_rule == "first":
        label = tied[0]
    elif tie_rule == "lowest":
        label = min(tied)
    else:
        label = tied[np.random.default_rng(seed).integers(len(tied))]
    return MajorityVote(label, dict(ranked), 0 if is_tie else top - runner_up, is_tie,
                        tie_rule, TIE_RULES[tie_rule], sum(votes.values()))


def majority_label(labels: Sequence[Any]) -> Any:
    """`majority_vote(labels).label` under tie rule "none" (None on a tie or without votes), without the rest of
    the result: a report asks it once per item, and the full result's counts and frozen dataclass cost more than
    the vote."""
    ranked = Counter(plain_present(labels)).most_common(2)  # as majority_vote ranks them
    if not ranked or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


_PLAIN_LABELS = {str, int, bool, type(None)}


def _plain_labels(answers: Sequence[Sequence[Any]]) -> bool:
    """True when every answer is a label as read from JSON (text, a whole number, yes/no) or None."""
    return set(map(type, chain.from_iterable(answers))) <= _PLAIN_LABELS


@dataclass(frozen=True)
class PanelAccuracy(Result):
    accuracy: float | None
    n_correct: int
    n_items: int
    m: int
    item_correct: list  # per item: at least m panel answers equal the gold label
    rule: str


def m_of_k_correct(answers: Sequence[Sequence[Any]], gold: Sequence[Any], m: int) -> PanelAccuracy:
    """Panel accuracy where an item is correct when at least `m` panel answers match gold.

    DialogBench: 3 experts, m=2. A missing answer counts as not matching.
    """
    if len(answers) != len(gold):
        raise ValueError(f"answers and gold differ in length ({len(answers)} != {len(gold)})")
    if m < 1:
        raise ValueError("m must be at least 1")
    if _plain_labels(answers):  # None is the only missing value: no per-answer check
        flags = [sum(1 for a in item if a is not None and a == g) >= m
                 for item, g in zip(answers, gold, strict=True)]
    else:
        flags = [sum(1 for a in item if not is_missing(a) and a == g) >= m
                 for item, g in zip(answers, gold, strict=True)]
    n = len(flags)
    return PanelAccuracy(sum(flags) / n if n else None, sum(flags), n, m, flags,
                         f"an item is correct when at least {m} answers match gold; missing answers do not match")


@dataclass(frozen=True)
class RaterAccuracy(Result):
    rater: Any
    accuracy: float | None
    n_correct: int
    n_answered: int


@dataclass(frozen=True)
class MeanOfRaters(Result):
    accuracy: float | None  # unweighted mean of the raters' accuracies
    std: float | None  # population std of the raters' accuracies
    raters: list
    missing: str


def mean_of_raters_accuracy(
    answers_by_rater: Mapping[Any, Sequence[Any]] | Sequence[Sequence[Any]],
    gold: Sequence[Any],
    missing: Literal["skip", "wrong"] = "skip",
) -> MeanOfRaters:
    """Mean of each rater's accuracy against gold (KoDialogBench human figure).

    `answers_by_rater` maps rater -> answers aligned with `gold` (a list is keyed 0, 1, ...).
    Missing answers are left out of that rater's count ("skip") or count as wrong ("wrong").
    """
    if missing not in ("skip", "wrong"):
        raise ValueError("missing must be 'skip' or 'wrong'")
    if not isinstance(answers_by_rater, Mapping):
        answers_by_rater = dict(enumerate(answers_by_rater))
    raters = []
    for rater, answers in answers_by_rater.items():
        if len(answers) != len(gold):
            raise ValueError(f"rater {rater!r} has {len(answers)} answers for {len(gold)} items")
        if _plain_labels([answers]):  # None is the only missing value: no per-answer check
            pairs = [(a, g) for a, g in zip(answers, gold, strict=True) if missing == "wrong" or a is not None]
            correct = sum(1 for a, g in pairs if a is not None and a == g)
        else:
            pairs = [(a, g) for a, g in zip(answers, gold, strict=True) if missing == "wrong" or not is_missing(a)]
            correct = sum(1 for a, g in pairs if not is_missing(a) and a == g)
        raters.append(RaterAccuracy(plain(rater), correct / len(pairs) if pairs else None, correct, len(pairs)))
    accs = [r.accuracy for r in raters if r.accuracy is not None]
    return MeanOfRaters(float(np.mean(accs)) if accs else None,
                        float(np.std(accs)) if accs else None, raters, missing)


@dataclass(frozen=True)
class ItemMeans(Result):
    means: list  # per item: mean of the present ratings, None when there are none
    counts: list  # per item: how many ratings were present


def mean_rating_per_item(ratings_by_item: Sequence[Sequence[Any]]) -> ItemMeans:
    """Mean rating of each item, ignoring missing ratings (None/NaN), never counting them as 0."""
    means, counts = [], []
    for item in ratings_by_item:
        values = present(item)
        if not all(is_number(v) for v in values):
            raise ValueError(f"ratings must be numbers or missing, got {values!r}")
        means.append(float(np.mean(values)) if values else None)
        counts.append(len(values))
    return ItemMeans(means, counts)


def majority_size(k: int) -> int:
    """m of a panel of k: the smallest strict majority, k // 2 + 1 (DialogBench: 2 of 3; 3 of 4)."""
    return k // 2 + 1


@dataclass(frozen=True)
class HumanBaseline(Result):
    k: int  # raters per item, from the campaign's settings
    m: int  # majority_size(k)
    majority: PanelAccuracy
    mean_of_raters: MeanOfRaters


def human_baseline(labels: Sequence[Mapping[Any, Any]], gold: Sequence[Any], k: int) -> HumanBaseline:
    """The human baseline scored both ways, the one rule the API and the report share.

    `labels[i]` maps rater -> answer on item i (raters who did not answer are absent), aligned with `gold`;
    items nobody answered are left out.
    majority: an item is right when at least m = majority_size(k) answers match gold; mean_of_raters: each
    rater's accuracy on the items they answered, averaged.
    """
    # Items nobody has answered yet are not scored: a baseline in progress is not a baseline of wrong answers.
    answered = [n for n, answers in enumerate(labels) if answers]
    labels, gold = [labels[n] for n in answered], [gold[n] for n in answered]
    raters = sorted({rater for answers in labels for rater in answers})
    majority = m_of_k_correct([list(answers.values()) for answers in labels], gold, majority_size(k))
    by_rater = {rater: [answers.get(rater) for answers in labels] for rater in raters}
    return HumanBaseline(k, majority_size(k), majority, mean_of_raters_accuracy(by_rater, gold, missing="skip"))


def median_reading_seconds(seconds: Iterable[float | None]) -> float | None:
    """The median reading time shown on the dashboard, in the hand-in event and in the report.

    The standard library's `statistics.median`: the middle value, or the mean of the two middle values when
    their number is even (as numpy's median). Times not recorded (None, NaN: imported labels) are left out;
    None when none is left.
    """
    if isinstance(seconds, np.ndarray) and seconds.dtype.kind == "f":
        times = seconds[~np.isnan(seconds)].tolist()  # NaN is the only missing value of a float array
    else:
        times = [float(t) for t in seconds if not is_missing(t)]
    return statistics.median(times) if times else None


# ---------------------------------------------------------------- annotator models

AnnotatorMethod = Literal["dawid_skene", "one_coin", "mace", "mace_em"]
ANNOTATOR_METHODS = {
    "dawid_skene": "Dawid-Skene: a confusion matrix per annotator (P(given label | true label)) and label priors",
    "one_coin": "one-coin Dawid-Skene: one competence per annotator, its errors spread evenly over the other labels",
    "mace": "MACE as published (crowd-kit's MACE: variational Bayes, 50 iterations from a seeded random start, "
            "the best of 10 restarts): each annotator knows the label with probability 1 - spamming, else "
            "answers from a label distribution of their own (uniform prior over the true label)",
    "mace_em": "MACE's model fitted by EM from the majority vote until the likelihood settles (not the published "
               "estimator: a higher likelihood, other labels)",
}
MACE_RESTARTS = 10  # crowd-kit's MACE defaults, the configuration its users publish
MACE_ITERATIONS = 50
MACE_NOISE = 0.5
EM_TOLERANCE = 1e-6  # stop when the mean log-likelihood per label changes by less than this
EM_MAX_ITERATIONS = 500
_FLOOR = 1e-10  # probabilities are kept at or above this before logs (as crowd-kit's Dawid-Skene)


@dataclass(frozen=True)
class AnnotatorModel(Result):
    method: str
    method_text: str
    labels: list  # the label set: the columns of `posteriors` and the rows and columns of each confusion matrix
    items: list
    annotators: list
    posteriors: np.ndarray  # items x labels: P(true label = labels[k] | every answer), each row summing to 1
    aggregate: list  # per item: the most probable label (the first in `labels` order on a tie)
    uncertainty: np.ndarray  # per item: 1 - the largest posterior
    priors: list  # P(true label), the mean of the posteriors (uniform for MACE, which fixes it)
    competence: dict  # annotator -> P(their label is the true one) under the model (MACE: P(knowing))
    confusion: dict | None  # Dawid-Skene, one-coin: annotator -> [true][given] P(given | true)
    spamming: dict | None  # MACE: annotator -> P(answering without knowing) (variational: its geometric mean)
    gold_fixed: int  # items whose posterior is held at their gold label
    iterations: int
    converged: bool
    tolerance: float
    max_iterations: int
    log_likelihood: float  # the marginal log-likelihood of the answers at the end

    def to_dict(self):
        # posteriors and uncertainty stay numpy arrays here (a list of a million floats costs seconds to make)
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["posteriors"], out["uncertainty"] = self.posteriors.tolist(), self.uncertainty.tolist()
        return out

    def most_uncertain(self, limit: int | None = None) -> list:
        """The items, most uncertain first (ties in item order)."""
        order = np.argsort(-self.uncertainty, kind="stable")
        return [self.items[n] for n in order[:limit]]


def _codes(values: Sequence[Any], order: Sequence[Any] | None = None) -> tuple[np.ndarray, list]:
    """Each value as its position in `order` (default: the values in order of first appearance)."""
    names = list(dict.fromkeys(order if order is not None else values))
    index = {name: n for n, name in enumerate(names)}
    try:
        return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values)), names
    except KeyError as missing:
        raise ValueError(f"label {missing.args[0]!r} is not one of the labels given") from None


class _Answers:
    """The answers as integer codes: item, annotator and label of each."""

    def __init__(self, answers, labels, gold):
        answers = answers if isinstance(answers, list) else list(answers)
        if not answers:
            raise ValueError("no answers to model")
        # three passes, not zip(*answers): unpacking every answer as an argument is slow at this size
        items, annotators, given = ([row[n] for row in answers] for n in range(3))
        # This runs over every answer: the types are read in one pass, and the slower checks (missing labels,
        # numpy scalars made plain) run only where a type calls for them.
        types = set(map(type, given))
        if type(None) in types or types & {float, np.float64, np.float32}:
            kept = [n for n, v in enumerate(given) if not is_missing(v)]
            if not kept:
                raise ValueError("no answers to model")
            items, annotators, given = ([column[n] for n in kept] for column in (items, annotators, given))
        if any(issubclass(t, np.generic) for t in types):
            given = [plain(v) for v in given]
        self.item, self.items = _codes(items)
        self.annotator, self.annotators = _codes(annotators)
        gold = {i: plain(v) for i, v in (gold or {}).items() if not is_missing(v)}
        # By default the label set is every label given or held as gold: an expert may settle on a label nobody gave.
        answered = set(items)
        default = sorted(set(given) | {v for i, v in gold.items() if i in answered}, key=_sort_key)
        self.label, self.labels = _codes(given, labels if labels is not None else default)
        self.n_items, self.n_annotators, self.n_labels = len(self.items), len(self.annotators), len(self.labels)
        label_code = {name: n for n, name in enumerate(self.labels)}
        unknown = sorted({repr(v) for v in gold.values() if v not in label_code})
        if unknown:
            raise ValueError(f"gold labels {', '.join(unknown)} are not among the labels")
        item_code = {name: n for n, name in enumerate(self.items)}
        held = [(item_code[i], label_code[v]) for i, v in gold.items() if i in item_code]
        self.gold_rows = np.array([r for r, _ in held], dtype=np.int64)
        self.gold_cols = np.array([c for _, c in held], dtype=np.int64)

    def hold_gold(self, posteriors):
        if self.gold_rows.size:
            posteriors[self.gold_rows] = 0.0
            posteriors[self.gold_rows, self.gold_cols] = 1.0
        return posteriors

    def per_item(self, weights):
        """Sum of a per-answer quantity over each item's answers."""
        return np.bincount(self.item, weights=weights, minlength=self.n_items)

    def majority_start(self):
        """Each item's share of votes per label (the deterministic start of every model), gold held."""
        counts = np.zeros((self.n_items, self.n_labels))
        np.add.at(counts, (self.item, self.label), 1.0)
        return self.hold_gold(counts / counts.sum(axis=1, keepdims=True))


def _sort_key(value):
    return (type(value).__name__, value) if isinstance(value, (int, float, str)) else ("~", repr(value))


def _normalised_log(log_weights):
    """Rows of log weights -> rows of probabilities, and the log of each row's total."""
    top = log_weights.max(axis=1, keepdims=True)
    weights = np.exp(log_weights - top)
    total = weights.sum(axis=1, keepdims=True)
    return weights / total, (np.log(total) + top).ravel()


def _confusion_e_step(data, log_priors, log_confusion):
    """P(true label | answers) from priors and per-annotator confusion matrices [annotator, true, given]."""
    per_answer = log_confusion[data.annotator, :, data.label]  # answers x true labels
    log_joint = log_priors + np.stack([data.per_item(per_answer[:, k]) for k in range(data.n_labels)], axis=1)
    posteriors, log_marginal = _normalised_log(log_joint)
    return data.hold_gold(posteriors), float(log_marginal.sum())


def _dawid_skene_m_step(data, posteriors):
    """Expected counts of (annotator, true, given), normalised over the given label."""
    counts = np.zeros((data.n_annotators, data.n_labels, data.n_labels))
    for k in range(data.n_labels):
        counts[:, k, :] = np.bincount(data.annotator * data.n_labels + data.label, weights=posteriors[data.item, k],
                                      minlength=data.n_annotators * data.n_labels).reshape(data.n_annotators, -1)
    counts = np.clip(counts, _FLOOR, None)
    return counts / counts.sum(axis=2, keepdims=True)


def _one_coin_m_step(data, posteriors):
    """Each annotator's competence (their answers' mean posterior), the rest spread evenly over the other labels."""
    skill = (np.bincount(data.annotator, weights=posteriors[data.item, data.label], minlength=data.n_annotators)
             / np.bincount(data.annotator, minlength=data.n_annotators))
    k = data.n_labels
    confusion = np.repeat(((1 - skill) / max(k - 1, 1))[:, None, None], k, axis=1).repeat(k, axis=2)
    confusion[:, np.arange(k), np.arange(k)] = skill[:, None]
    return np.clip(confusion, _FLOOR, 1 - _FLOOR), skill


def _run_em(data, params, e_step, m_step, tolerance, max_iterations):
    """EM from parameters read off the majority vote: E-step, then M-step, until the log-likelihood per answer
    changes by less than `tolerance` or after `max_iterations` iterations."""
    previous, converged, iterations, log_likelihood = -np.inf, False, 0, -np.inf
    n_answers = data.item.size
    for iterations in range(1, max_iterations + 1):  # noqa: B007 -- the count is read after the loop
        posteriors, log_likelihood = e_step(params)
        params = m_step(posteriors, params)
        if abs(log_likelihood - previous) / n_answers < tolerance:
            converged = True
            break
        previous = log_likelihood
    return posteriors, params, iterations, converged, log_likelihood


def _result(method, data, posteriors, priors, competence, confusion, spamming, iterations, converged, log_likelihood,
            tolerance, max_iterations):
    best = posteriors.argmax(axis=1)
    named = dict(zip(data.annotators, range(data.n_annotators), strict=True))
    return AnnotatorModel(
        method, ANNOTATOR_METHODS[method], data.labels, data.items, data.annotators, posteriors,
        [data.labels[k] for k in best.tolist()], 1 - posteriors.max(axis=1), priors.tolist(),
        {a: float(competence[n]) for a, n in named.items()},
        None if confusion is None else {a: confusion[n].tolist() for a, n in named.items()},
        None if spamming is None else {a: float(spamming[n]) for a, n in named.items()},
        int(data.gold_rows.size), iterations, converged, tolerance, max_iterations, float(log_likelihood))


def dawid_skene(answers: Iterable[tuple[Any, Any, Any]], *, labels: Sequence[Any] | None = None,
                gold: Mapping[Any, Any] | None = None, one_coin: bool = False, tolerance: float = EM_TOLERANCE,
                max_iterations: int = EM_MAX_ITERATIONS) -> AnnotatorModel:
    """Dawid and Skene (1979) by EM, or its one-coin form (one competence per annotator).

    `answers`: (item, annotator, label) triples; missing labels are left out. `labels`: the label set in the
    order wanted (default: the labels given, sorted). `gold`: item -> label held fixed as that item's posterior
    (expert gold). The start is each item's share of majority votes (deterministic); each iteration is an
    M-step (confusion matrices from the posteriors, counts floored at 1e-10) then an E-step; it stops when the
    log-likelihood per answer moves by less than `tolerance`, or after `max_iterations`.
    competence: P(an annotator's label is the true one) = sum over true labels of prior x diagonal.
    """
    data = _Answers(answers, labels, gold)

    def m_step(posteriors, _=None):
        priors = np.clip(posteriors.mean(axis=0), _FLOOR, None)
        if one_coin:
            return priors, *_one_coin_m_step(data, posteriors)
        return priors, _dawid_skene_m_step(data, posteriors), None

    def e_step(params):
        priors, confusion, _ = params
        return _confusion_e_step(data, np.log(priors), np.log(confusion))

    posteriors, (priors, confusion, skill), iterations, converged, log_likelihood = _run_em(
        data, m_step(data.majority_start()), e_step, m_step, tolerance, max_iterations)
    diagonal = confusion[:, np.arange(data.n_labels), np.arange(data.n_labels)]
    competence = skill if one_coin else diagonal @ priors
    return _result("one_coin" if one_coin else "dawid_skene", data, posteriors, priors, competence, confusion, None,
                   iterations, converged, log_likelihood, tolerance, max_iterations)


def mace_em(answers: Iterable[tuple[Any, Any, Any]], *, labels: Sequence[Any] | None = None,
            gold: Mapping[Any, Any] | None = None, variational: bool = False, alpha: float = 0.5,
            beta: float = 0.5, tolerance: float = EM_TOLERANCE,
            max_iterations: int = EM_MAX_ITERATIONS) -> AnnotatorModel:
    """MACE's model (Hovy, Berg-Kirkpatrick, Vaswani and Hovy, NAACL 2013) fitted by EM from the majority vote
    until it settles: not the published estimator (`mace`), whose short variational run from a random start
    stops far from this maximum and labels items otherwise.

    An annotator knows the true label with probability 1 - spamming and gives it; otherwise they answer from
    a label distribution of their own. The true label has a uniform prior. The start: competence = the
    annotator's mean majority-vote share of their own answers, answer distribution = their label frequencies.
    M-step: expected counts plus 0.01 / K smoothing, normalised (MACE's EM); `variational` uses MACE's
    variational Bayes step instead (Beta(alpha, beta) prior on knowing, Dirichlet(10) on the answer
    distribution). Stopping and `gold` as in `dawid_skene`.
    """
    data = _Answers(answers, labels, gold)
    steps, m_step = _mace_steps(data, variational, alpha, beta)

    def e_step(params):
        posteriors, log_marginal = steps(params)
        return posteriors, float(log_marginal.sum())

    given = np.zeros((data.n_annotators, data.n_labels))
    np.add.at(given, (data.annotator, data.label), 1.0)
    start = data.majority_start()
    agreement = np.clip(np.bincount(data.annotator, weights=start[data.item, data.label], minlength=data.n_annotators)
                        / np.bincount(data.annotator, minlength=data.n_annotators), _FLOOR, 1 - _FLOOR)
    # (spamming, knowing) weights per annotator: probabilities under EM; under variational Bayes the geometric
    # means exp(E[log p]), which need not sum to 1
    initial = (np.stack([1 - agreement, agreement]), given / given.sum(axis=1, keepdims=True))
    posteriors, ((spamming, knowing), strategy), iterations, converged, log_likelihood = _run_em(
        data, initial, e_step, m_step, tolerance, max_iterations)
    return _result("mace_em", data, posteriors, np.full(data.n_labels, 1 / data.n_labels), knowing, None, spamming,
                   iterations, converged, log_likelihood, tolerance, max_iterations)


def _mace_steps(data, variational, alpha, beta):
    """MACE's E-step (posteriors and the log-likelihood from (spamming, knowing) weights and each annotator's
    answer distribution) and M-step (expected counts, normalised: + 0.01 / K under EM, exp(digamma) with
    Beta(alpha, beta) and Dirichlet(10) priors under variational Bayes), as crowd-kit's MACE computes them."""
    k = data.n_labels
    smoothing = 0.01 / k

    def normalise(counts, prior):
        if variational:
            from scipy.special import digamma

            return np.exp(digamma(counts + prior) - digamma((counts + prior).sum(axis=1, keepdims=True)))
        return (counts + smoothing) / (counts + smoothing).sum(axis=1, keepdims=True)

    def expected_counts(posteriors, params):
        (spam_weight, know_weight), strategy = params
        spam = spam_weight[data.annotator] * strategy[data.annotator, data.label]  # per answer
        know = know_weight[data.annotator]
        truth = posteriors[data.item, data.label]  # P(true label = the answer given)
        # P(this answer came from knowing | answers) = P(true = answer) * know / (know + spam)
        knew = truth * know / (know + spam)
        spammed = 1 - knew
        knowing_counts = np.stack([np.bincount(data.annotator, weights=spammed, minlength=data.n_annotators),
                                   np.bincount(data.annotator, weights=knew, minlength=data.n_annotators)], axis=1)
        strategy_counts = np.zeros((data.n_annotators, k))
        np.add.at(strategy_counts, (data.annotator, data.label), spammed)
        return knowing_counts, strategy_counts

    def m_step(posteriors, params):
        knowing_counts, strategy_counts = expected_counts(posteriors, params)
        return normalise(knowing_counts, np.array([[alpha, beta]])).T, normalise(strategy_counts, 10.0)

    def e_step(params):
        (spam_weight, know_weight), strategy = params
        spam = spam_weight[data.annotator, None] * strategy[data.annotator, data.label][:, None]
        per_answer = np.log(np.where(np.arange(k)[None, :] == data.label[:, None], know_weight[data.annotator, None], 0)
                            + spam)
        log_joint = np.log(1 / k) + np.stack([data.per_item(per_answer[:, c]) for c in range(k)], axis=1)
        posteriors, log_marginal = _normalised_log(log_joint)
        return data.hold_gold(posteriors), log_marginal

    return e_step, m_step


def mace(answers: Iterable[tuple[Any, Any, Any]], *, labels: Sequence[Any] | None = None,
         gold: Mapping[Any, Any] | None = None, variational: bool = True, restarts: int = MACE_RESTARTS,
         iterations: int = MACE_ITERATIONS, noise: float = MACE_NOISE, alpha: float = 0.5, beta: float = 0.5,
         seed: int = 0) -> AnnotatorModel:
    """MACE (Hovy, Berg-Kirkpatrick, Vaswani and Hovy, NAACL 2013) as crowd-kit 1.4.2 computes it with its
    defaults, the configuration published results use: variational Bayes (Beta(0.5, 0.5) on knowing, Dirichlet(10)
    on each annotator's answer distribution; `variational` False: EM with 0.01 / K smoothing), `iterations` steps
    (no stopping rule), kept from the restart whose last E-step has the highest log-likelihood.

    The start, as crowd-kit draws it: (spamming, knowing) weights and answer distributions uniform on
    [1, 2.5] (scipy.stats.uniform(1, 1 + noise) with random_state `seed`), each row normalised; workers and
    labels numbered in order of first appearance. crowd-kit passes the same integer seed to every restart, so
    that its restarts start alike and end alike: they are run here as one, with the same outcome. Steps: an
    E-step, then `iterations` times an M-step and an E-step; the log-likelihood is crowd-kit's, the sum over items
    of log(P(answers) + 1e-8). Computed in logs (crowd-kit multiplies the probabilities, which underflows on items
    with many answers); crowd-kit reads its per-label counts in the sorted order of workers' and labels' names,
    so that its answers equal these when that order is the order of first appearance. `gold`: as in
    `dawid_skene` (crowd-kit's MACE has none).
    """
    if iterations < 0 or restarts < 1:
        raise ValueError("iterations must be 0 or more and restarts 1 or more")
    answers = answers if isinstance(answers, list) else list(answers)
    first_seen = list(dict.fromkeys(plain(row[2]) for row in answers if not is_missing(row[2])))
    data = _Answers(answers, None, gold)  # checks the answers and the gold; the label order is set below
    order = first_seen + [v for v in (labels if labels is not None else data.labels) if v not in first_seen]
    if labels is not None:
        unknown = [v for v in first_seen if v not in labels]
        if unknown:
            raise ValueError(f"label {unknown[0]!r} is not one of the labels given")
    data = _Answers(answers, order, gold)
    e_step, m_step = _mace_steps(data, variational, alpha, beta)
    from scipy import stats

    draw = stats.uniform(1, 1 + noise)
    spam = draw.rvs(size=(data.n_annotators, 2), random_state=seed)
    strategy = draw.rvs(size=(data.n_annotators, data.n_labels), random_state=seed)
    params = ((spam / spam.sum(axis=1, keepdims=True)).T, strategy / strategy.sum(axis=1, keepdims=True))
    posteriors, log_marginal = e_step(params)
    for _ in range(iterations):
        params = m_step(posteriors, params)
        posteriors, log_marginal = e_step(params)
    log_likelihood = float(np.logaddexp(log_marginal, np.log(1e-8)).sum())
    (spamming, knowing), _ = params
    wanted = list(labels) if labels is not None else sorted(order, key=_sort_key)
    columns = [order.index(v) for v in wanted]
    data.labels = wanted  # the columns as asked (the steps are done)
    return _result("mace", data, posteriors[:, columns], np.full(len(wanted), 1 / len(wanted)), knowing, None,
                   spamming, iterations, False, log_likelihood, 0.0, iterations)


def annotator_model(method: AnnotatorMethod, answers, **options) -> AnnotatorModel:
    """One of ANNOTATOR_METHODS by name."""
    if method == "dawid_skene":
        return dawid_skene(answers, **options)
    if method == "one_coin":
        return dawid_skene(answers, one_coin=True, **options)
    if method == "mace":
        return mace(answers, **options)
    if method == "mace_em":
        return mace_em(answers, **options)
    raise ValueError(f"method must be one of {sorted(ANNOTATOR_METHODS)}")


MAJORITY_DISAGREEMENT_SHOWN = 0.03  # beyond this share of items, a model's aggregate is shown beside majority vote


def disagreement_with_majority(model: AnnotatorModel, answers: Iterable[tuple[Any, Any, Any]]) -> float | None:
    """The share of the model's items whose most probable label is not their majority vote (`majority_label`: an
    item with a tied vote has none, so it counts as a disagreement). None without items."""
    by_item: dict = {}
    for item, _, label in answers:
        by_item.setdefault(item, []).append(label)
    if not model.items:
        return None
    differ = sum(majority_label(by_item.get(item, [])) != label
                 for item, label in zip(model.items, model.aggregate, strict=True))
    return differ / len(model.items)
