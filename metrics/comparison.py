"""Human versus model on the same items: accuracy intervals, paired gap, McNemar,
correlations and classification metrics."""
from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from ._common import Result, as_number, check_confidence, is_missing, percentile_interval, plain, to_float
from .agreement import cohen_kappa
from .bootstrap import resample_indices


def _flags(values: Sequence[Any], name: str) -> np.ndarray:
    """Correctness flags as a bool array; anything but True/False/1/0 is an error."""
    if isinstance(values, np.ndarray) and values.dtype == bool:
        return values.reshape(-1)
    if any(is_missing(v) or v not in (0, 1) for v in values):
        raise ValueError(f"{name} must hold only True/False (or 1/0)")
    return np.asarray(values, dtype=bool).reshape(-1)


def _paired_flags(human: Sequence[Any], model: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    if len(human) != len(model):
        raise ValueError(f"human and model differ in length ({len(human)} != {len(model)}): pair them by item")
    return _flags(human, "human_correct"), _flags(model, "model_correct")


@dataclass(frozen=True)
class Proportion(Result):
    accuracy: float | None
    low: float | None
    high: float | None
    n_correct: int
    n: int
    confidence: float
    method: str = "wilson"
    undefined_reason: str | None = None


def accuracy_with_wilson(correct_flags: Sequence[Any], confidence: float = 0.95) -> Proportion:
    """Accuracy with its Wilson score interval (statsmodels)."""
    check_confidence(confidence)
    flags = _flags(correct_flags, "correct_flags")
    n, k = int(flags.size), int(flags.sum())
    if n == 0:
        return Proportion(None, None, None, 0, 0, confidence, undefined_reason="no items")
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return Proportion(k / n, float(low), float(high), k, n, confidence)


PAIRED_GAP = "percentile bootstrap, items resampled with both sides together"


@dataclass(frozen=True)
class PairedGap(Result):
    gap: float | None  # human accuracy - model accuracy
    low: float | None
    high: float | None
    human_accuracy: float | None
    model_accuracy: float | None
    n_items: int
    confidence: float
    n_resamples: int
    seed: int | None
    method: str = PAIRED_GAP
    undefined_reason: str | None = None


def paired_bootstrap_gap(
    human_correct: Sequence[Any],
    model_correct: Sequence[Any],
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> PairedGap:
    """Human minus model accuracy on the same items, with a paired percentile interval."""
    check_confidence(confidence)
    human, model = _paired_flags(human_correct, model_correct)
    n = int(human.size)
    if n == 0:
        return PairedGap(None, None, None, None, None, 0, confidence, n_resamples, seed,
                         undefined_reason="no items")
    # The resampled gaps of `paired_bootstrap_gaps` with one model: the same indices, the same exact sums.
    (gap, low, high), = paired_bootstrap_gaps(human, [model], n_resamples, seed, confidence).gaps
    return PairedGap(gap, low, high, float(human.mean()), float(model.mean()), n, confidence, n_resamples, seed)


@dataclass(frozen=True)
class McNemar(Result):
    statistic: float  # exact test: the smaller discordant count
    pvalue: float
    table: list  # rows human right/wrong, columns model right/wrong
    human_only: int  # items only the human got right
    model_only: int  # items only the model got right
    method: str = "McNemar exact (binomial on discordant pairs), two-sided"
    note: str | None = None


def mcnemar_exact(human_correct: Sequence[Any], model_correct: Sequence[Any]) -> McNemar:
    """Exact McNemar test of human versus model accuracy on the same items (statsmodels)."""
    human, model = _paired_flags(human_correct, model_correct)
    table = [[int(np.sum(human & model)), int(np.sum(human & ~model))],
             [int(np.sum(~human & model)), int(np.sum(~human & ~model))]]
    result = mcnemar(table, exact=True)
    b, c = table[0][1], table[1][0]
    note = None if b + c else "no discordant items: the test has nothing to compare (p = 1)"
    return McNemar(float(result.statistic), float(result.pvalue), table, b, c, note=note)


@dataclass(frozen=True)
class Correlation(Result):
    value: float | None
    pvalue: float | None


@dataclass(frozen=True)
class Correlations(Result):
    spearman: Correlation
    pearson: Correlation
    kendall_tau_b: Correlation
    n: int  # complete pairs used
    n_dropped: int  # pairs with a missing value on either side
    undefined_reason: str | None = None


def correlations(x: Sequence[Any], y: Sequence[Any]) -> Correlations:
    """Spearman, Pearson and Kendall tau-b with two-sided p-values (SciPy).

    Pairs with a missing value (None/NaN) on either side are dropped and counted.
    """
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length ({len(x)} != {len(y)})")
    pairs = [(float(a), float(b)) for a, b in zip(x, y, strict=True) if not (is_missing(a) or is_missing(b))]
    n, dropped = len(pairs), len(x) - len(pairs)
    none = Correlation(None, None)

    def undefined(reason: str) -> Correlations:
        return Correlations(none, none, none, n, dropped, reason)

    if n < 3:
        return undefined("fewer than 3 complete pairs: correlations are undefined")
    xs, ys = map(np.array, zip(*pairs, strict=True))
    constant = [name for name, v in (("x", xs), ("y", ys)) if np.all(v == v[0])]
    if constant:
        return undefined(f"{' and '.join(constant)} is constant: correlations are undefined")

    def pack(res: Any) -> Correlation:
        return Correlation(to_float(res.statistic), to_float(res.pvalue))

    return Correlations(pack(stats.spearmanr(xs, ys)), pack(stats.pearsonr(xs, ys)),
                        pack(stats.kendalltau(xs, ys, variant="b")), n, dropped)


def leave_one_out_correlations(per_item: dict[Any, dict[Any, Any]],
                               items: Sequence[Any]) -> list[tuple[Any, Correlations]]:
    """Each rater against the mean of the other raters on the same items (the human ceiling of a rating
    task): per_item maps item -> {rater: rating}; ratings that are not numbers are left out."""
    raters = sorted({r for i in items for r in per_item.get(i, {})}, key=str)
    out = []
    for rater in raters:
        mine, others = [], []
        for i in items:
            ratings = per_item.get(i, {})
            rest = [as_number(v) for r, v in ratings.items() if r != rater and as_number(v) is not None]
            if rater in ratings and as_number(ratings[rater]) is not None and rest:
                mine.append(as_number(ratings[rater]))
                others.append(float(np.mean(rest)))
        out.append((rater, correlations(mine, others)))
    return out


@dataclass(frozen=True)
class ClassMetrics(Result):
    label: Any
    precision: float
    recall: float | None  # None when the class never occurs in gold
    f1: float
    support: int


@dataclass(frozen=True)
class Classification(Result):
    n: int
    accuracy: float | None
    uar: float | None  # unweighted average recall: plain mean of the recalls of gold classes
    macro_precision: float | None
    macro_recall: float | None
    macro_f1: float | None
    weighted_precision: float | None
    weighted_recall: float | None
    weighted_f1: float | None
    per_class: list
    labels: list
    confusion_matrix: list  # rows gold, columns predicted, in `labels` order
    n_invalid_predictions: int  # missing or outside `labels`: counted wrong, not in the matrix
    majority_class: Any
    majority_class_rate: float | None  # accuracy of always answering the commonest gold class
    note: str = ("uar is the true mean of per-class recalls over classes present in gold; "
                 "precision of a never-predicted class counts as 0; "
                 "missing or unknown predictions count as wrong")
    undefined_reason: str | None = None


def classification_metrics(
    gold: Sequence[Any], predicted: Sequence[Any], labels: Sequence[Any] | None = None
) -> Classification:
    """Accuracy, UAR, macro/weighted precision-recall-F1, per-class recall, confusion matrix.

    A missing prediction (None/NaN, e.g. an unparsable model output) counts as wrong.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"gold and predicted differ in length ({len(gold)} != {len(predicted)})")
    if any(is_missing(g) for g in gold):
        raise ValueError("gold has missing labels")
    gold = [plain(v) for v in gold]
    predicted = [None if is_missing(v) else plain(v) for v in predicted]
    if labels is None:
        labels = sorted(set(gold) | (set(predicted) - {None}), key=lambda v: (str(type(v)), v))
    labels = [plain(v) for v in labels]
    unknown = set(gold) - set(labels)
    if unknown:
        raise ValueError(f"gold labels not in labels: {sorted(map(repr, unknown))}")
    n = len(gold)
    if n == 0:
        return Classification(0, *[None] * 8, [], labels, [], 0, None, None, undefined_reason="no items")
    # Integer codes keep sklearn away from mixed label types; code len(labels) = invalid answer.
    code = {lab: i for i, lab in enumerate(labels)}
    y_true = np.array([code[g] for g in gold])
    y_pred = np.array([code.get(q, len(labels)) if q is not None else len(labels) for q in predicted])
    codes = list(range(len(labels)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero_division=0 is stated in the note
        p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=codes, zero_division=0)
        macro = precision_recall_fscore_support(y_true, y_pred, labels=codes, average="macro", zero_division=0)
        weighted = precision_recall_fscore_support(y_true, y_pred, labels=codes, average="weighted",
                                                   zero_division=0)
    per_class = [ClassMetrics(lab, float(p[i]), float(r[i]) if s[i] else None, float(f[i]), int(s[i]))
                 for i, lab in enumerate(labels)]
    recalls = [c.recall for c in per_class if c.recall is not None]
    majority, count = Counter(gold).most_common(1)[0]
    return Classification(
        n=n,
        accuracy=float(np.mean(y_true == y_pred)),
        uar=float(np.mean(recalls)) if recalls else None,
        macro_precision=to_float(macro[0]), macro_recall=to_float(macro[1]), macro_f1=to_float(macro[2]),
        weighted_precision=to_float(weighted[0]), weighted_recall=to_float(weighted[1]),
        weighted_f1=to_float(weighted[2]),
        per_class=per_class,
        labels=labels,
        confusion_matrix=confusion_matrix(y_true, y_pred, labels=codes).tolist(),
        n_invalid_predictions=int(np.sum(y_pred == len(labels))),
        majority_class=majority,
        majority_class_rate=count / n,
    )


@dataclass(frozen=True)
class PairedGaps(Result):
    """Human minus each model's accuracy on the same items, one set of resamples for all models."""

    gaps: list  # per model: (gap, low, high)
    replicates: Any  # n_resamples x models array of resampled gaps (for stratified intervals)
    n_items: int
    method: str = "percentile bootstrap over items, both sides resampled together"


def paired_bootstrap_gaps(human_correct: Sequence[Any], models_correct: Sequence[Sequence[Any]],
                          n_resamples: int = 1000, seed: int | None = 0, confidence: float = 0.95) -> PairedGaps:
    """`paired_bootstrap_gap` for several models at once: equal to it model by model (same indices,
    same exact integer sums), with the replicates kept so that intervals over several tasks can be built."""
    check_confidence(confidence)
    human = _flags(human_correct, "human_correct")
    models = [_paired_flags(human, m)[1] for m in models_correct]
    n = int(human.size)
    if n == 0 or not models:
        return PairedGaps([], np.zeros((0, len(models))), n)
    diffs = np.stack([human.astype(float) - m.astype(float) for m in models], axis=1)
    # Each resample's mean diff: its exact integer sum over n (as bincount(idx) @ diffs / n gives it).
    replicates = (_resampled_sums(diffs.astype(np.int64) + 1, n_resamples, seed) - n) / n
    return PairedGaps([(float(diffs[:, j].mean()), *percentile_interval(replicates[:, j], confidence))
                       for j in range(len(models))], replicates, n)


def _resampled_sums(digits: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """n_resamples x columns: each resample's column sums of an items x columns table of 0, 1 and 2, exact.

    The columns are packed as digits of one int64 per item (as many as fit: each digit's sum stays below
    2 * items), so that a resample is one gather and one sum per packed word."""
    n, width = digits.shape
    bits = (2 * n).bit_length()
    per_word = 63 // bits
    sums = np.empty((n_resamples, width), dtype=np.int64)
    words = [range(w, min(w + per_word, width)) for w in range(0, width, per_word)]
    packed = [sum(digits[:, j] << (bits * k) for k, j in enumerate(cols)) for cols in words]
    mask = (1 << bits) - 1
    for r, idx in enumerate(resample_indices(n, n_resamples, seed)):
        for cols, word in zip(words, packed, strict=True):
            total = int(word.take(idx).sum())
            for k, j in enumerate(cols):
                sums[r, j] = (total >> (bits * k)) & mask
    return sums


STRATIFIED = "within-task (stratified) percentile bootstrap: items resampled inside each task, tasks averaged"


def stratified_interval(task_replicates: Sequence[Any], confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile interval of the unweighted mean over tasks, from each task's own bootstrap replicates
    (tasks resampled independently: a bootstrap stratified by task). A task of one or two items adds
    almost no spread, so with tiny tasks this interval is narrow: see `paired_bootstrap_gap` over the
    pooled items for the item-level one."""
    check_confidence(confidence)
    if not len(task_replicates):
        return None, None
    return percentile_interval(np.mean(np.asarray(task_replicates, dtype=float), axis=0), confidence)


@dataclass(frozen=True)
class JudgeAgreement(Result):
    kappa: float | None  # Cohen's kappa of the labels' codes; None for graded or continuous answers
    correlations: Correlations  # Pearson, Spearman and Kendall tau-b of the codes, or of the ratings
    n: int  # items with an answer of the judge
    n_left_out: int  # items without one
    kappa_undefined_reason: str | None = None


def judge_agreement(people: Sequence[Any], judge: Sequence[Any], labels: Sequence[Any] | None = None) -> JudgeAgreement:
    """A judge's answers against the people's aggregate per item, as JUDGE-BENCH measures a judge (its
    eval_responses.py `evaluate`): with `labels` (categorical data), each answer coded by its position in `labels`,
    Cohen's kappa of the codes (1 where the judge's answers are the people's, item for item) and the three
    correlations of the codes; without (graded or continuous data), the correlations of the ratings with the
    people's mean, and no kappa. An item the judge has no answer for (None) is left out, as the study leaves it."""
    if len(people) != len(judge):
        raise ValueError(f"people and judge differ in length ({len(people)} != {len(judge)})")
    pairs = [(p, j) for p, j in zip(people, judge, strict=True) if not (is_missing(j) or is_missing(p))]
    left_out = len(people) - len(pairs)
    if labels is None:
        xs, ys = [float(p) for p, _ in pairs], [float(j) for _, j in pairs]
        return JudgeAgreement(None, correlations(xs, ys), len(pairs), left_out,
                              "graded and continuous answers are measured by their correlations, not by kappa")
    codes = {plain(label): index for index, label in enumerate(labels)}
    unknown = sorted({repr(v) for pair in pairs for v in pair if plain(v) not in codes})
    if unknown:
        raise ValueError(f"answers not in labels: {unknown}")
    xs, ys = [codes[plain(p)] for p, _ in pairs], [codes[plain(j)] for _, j in pairs]
    corr = correlations(xs, ys)
    if not pairs:
        return JudgeAgreement(None, corr, 0, left_out, "no item has an answer of the judge")
    if xs == ys:
        return JudgeAgreement(1.0, corr, len(pairs), left_out)  # the study's rule where sklearn's kappa is undefined
    kappa = cohen_kappa(xs, ys, labels=list(range(len(labels))))
    return JudgeAgreement(kappa.value, corr, len(pairs), left_out, kappa.undefined_reason)
