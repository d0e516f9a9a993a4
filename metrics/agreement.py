"""Inter-rater agreement: Fleiss/Randolph kappa, Krippendorff's alpha, Cohen's kappa,
raw agreement and Landis-Koch bands.

`ratings_by_item` is a list with one list of labels per item; None or NaN is a missing
rating. Raters need not be identified: these statistics depend only on the labels each
item received.
"""
from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, pairwise
from typing import Any, Literal

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

from ._common import Result, is_missing, is_number, plain, plain_present, to_float
from .bootstrap import BootstrapInterval, bootstrap_ci  # noqa: F401  (re-exported)

RatingsByItem = Sequence[Sequence[Any]]

SAME_CATEGORY = "every rating is the same category: kappa is undefined"
NO_ITEMS = "no items"
FEWER_THAN_2_RATERS = "fewer than 2 raters per item"


@dataclass(frozen=True)
class Agreement(Result):
    statistic: str
    value: float | None
    n_items: int  # items that entered the statistic
    n_left_out: int  # items left out (missing ratings, fewer than 2 ratings)
    n_raters: int | None  # raters per item (Fleiss), most ratings on one item otherwise
    n_categories: int | None = None
    undefined_reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


_PLAIN_LABELS = {str, int, bool}


def _rated_items(ratings_by_item: RatingsByItem) -> list[Sequence[Any]]:
    """Each item's ratings without the missing ones, as plain Python values."""
    kinds = set(map(type, chain.from_iterable(ratings_by_item)))
    # Labels read from JSON are plain, and None is their only missing value: skip the per-value checks.
    if kinds <= _PLAIN_LABELS:
        return list(ratings_by_item)
    if kinds <= _PLAIN_LABELS | {type(None)}:
        return [[v for v in item if v is not None] for item in ratings_by_item]
    return [plain_present(item) for item in ratings_by_item]


def _count_table(items: list[list[Any]], column: dict[Any, int]) -> np.ndarray:
    """items x categories: how many ratings each item got in each category (`column`: label -> index)."""
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    flat = np.fromiter(map(column.__getitem__, chain.from_iterable(items)), dtype=np.int64, count=int(lengths.sum()))
    cells = np.repeat(np.arange(len(items), dtype=np.int64), lengths) * len(column) + flat
    return np.bincount(cells, minlength=len(items) * len(column)).reshape(len(items), len(column))


def _category_list(items: list[list[Any]], categories: Sequence[Any] | None) -> list[Any]:
    if categories is None:
        return list(dict.fromkeys(chain.from_iterable(items)))  # order of appearance
    categories = [plain(c) for c in categories]
    if len(set(categories)) != len(categories):
        raise ValueError("categories contain duplicates")
    unknown = set(chain.from_iterable(items)) - set(categories)
    if unknown:
        raise ValueError(f"labels not in categories: {sorted(map(repr, unknown))}")
    return categories


def _modal_raters(counts: list[int]) -> int | None:
    """Most common number of ratings among items with 2 or more (ties: the larger)."""
    counts = [c for c in counts if c >= 2]
    if not counts:
        return None
    tally = Counter(counts)
    return max(tally, key=lambda c: (tally[c], c))


def fleiss_kappa_counts(table: Any, method: Literal["fleiss", "randolph"] = "fleiss") -> Agreement:
    """Fleiss' (or Randolph's) kappa of an items x categories count table, statsmodels' input form
    (what `statsmodels.stats.inter_rater.aggregate_raters` returns): cell (i, j) is how many raters
    put item i in category j, and every row must sum to the same number of raters."""
    if method not in ("fleiss", "randolph"):
        raise ValueError("method must be 'fleiss' or 'randolph'")
    counts = np.asarray(table)
    if counts.ndim != 2 or counts.shape[1] < 2:
        raise ValueError("a count table is items x categories, with at least 2 categories")
    if counts.dtype.kind not in "iuf" or np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("a count table holds non-negative whole counts")
    counts = counts.astype(np.int64)
    name = f"{method}_kappa"
    totals = counts.sum(axis=1)
    n_items, n_cat = int(counts.shape[0]), int(counts.shape[1])
    if n_items == 0:
        return Agreement(name, None, 0, 0, None, n_cat, NO_ITEMS)
    if len(set(totals.tolist())) != 1:
        raise ValueError("every row of a count table must sum to the same number of raters, got "
                         f"{sorted(set(totals.tolist()))}")
    n_raters = int(totals[0])
    if n_raters < 2:
        return Agreement(name, None, 0, n_items, n_raters, n_cat, FEWER_THAN_2_RATERS)
    if method == "fleiss" and np.count_nonzero(counts.sum(axis=0)) == 1:
        return Agreement(name, None, n_items, 0, n_raters, n_cat, SAME_CATEGORY)
    value = to_float(inter_rater.fleiss_kappa(counts, method=method))
    return Agreement(name, value, n_items, 0, n_raters, n_cat, None if value is not None else "kappa is not finite")


def fleiss_kappa(
    ratings: Any,
    method: Literal["fleiss", "randolph"] = "fleiss",
    categories: Sequence[Any] | None = None,
    n_raters: int | None = None,
    *,
    given: Literal["labels", "counts"],
) -> Agreement:
    """Fleiss' kappa, or Randolph's free-marginal kappa, via statsmodels.

    `given` says what `ratings` holds, and is required because the two read differently and a table of
    small whole numbers can be either: "labels", one list of labels per item; "counts", an items x
    categories count table (statsmodels' form, see `fleiss_kappa_counts`).

    With labels, only items with exactly `n_raters` ratings are used (default: the most common count),
    because the statistic assumes equal raters per item; the rest are counted as left out.
    Randolph's kappa depends on the number of categories, so labels need `categories` for it.
    """
    if given == "counts":
        if categories is not None or n_raters is not None:
            raise ValueError("a count table names neither categories nor n_raters: its columns are the categories")
        return fleiss_kappa_counts(ratings, method)
    if given != "labels":
        raise ValueError(f"given must be 'labels' or 'counts', got {given!r}")
    if method not in ("fleiss", "randolph"):
        raise ValueError("method must be 'fleiss' or 'randolph'")
    if method == "randolph" and categories is None:
        raise ValueError("Randolph's kappa depends on the number of categories: pass categories")
    name = f"{method}_kappa"
    items = _rated_items(ratings)
    cats = _category_list(items, categories)

    def undefined(reason: str, used: int = 0) -> Agreement:
        return Agreement(name, None, used, len(items) - used, n_raters, len(cats), reason)

    if not items:
        return undefined(NO_ITEMS)
    if n_raters is None:
        n_raters = _modal_raters([len(item) for item in items])
    if n_raters is None or n_raters < 2:
        return undefined(FEWER_THAN_2_RATERS)
    kept = [item for item in items if len(item) == n_raters]
    if not kept:
        return undefined(f"no item has exactly {n_raters} ratings")
    if len(cats) < 2:
        reason = SAME_CATEGORY if method == "fleiss" else "fewer than 2 categories: kappa is undefined"
        return undefined(reason, len(kept))
    if method == "fleiss" and len(set(chain.from_iterable(kept))) == 1:
        # statsmodels returns NaN here (chance agreement is 1)
        return undefined(SAME_CATEGORY, len(kept))

    # The items x categories count table that statsmodels' aggregate_raters would build.
    table = _count_table(kept, {c: i for i, c in enumerate(cats)})
    value = to_float(inter_rater.fleiss_kappa(table, method=method))
    return Agreement(name, value, len(kept), len(items) - len(kept), n_raters, len(cats),
                     None if value is not None else "kappa is not finite")


def krippendorff_alpha(
    ratings_by_item: RatingsByItem,
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
    value_domain: Sequence[Any] | None = None,
) -> Agreement:
    """Krippendorff's alpha via the `krippendorff` package; missing ratings are allowed.

    Nominal labels may be any hashable values. Ordinal labels that are not numbers need an
    ordered `value_domain`; interval and ratio labels must be numbers. Items with fewer
    than 2 ratings cannot be paired and are counted as left out.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError("level must be nominal, ordinal, interval or ratio")
    name = f"krippendorff_alpha_{level}"
    items = _rated_items(ratings_by_item)
    paired = [item for item in items if len(item) >= 2]
    observed = list(dict.fromkeys(v for item in paired for v in item))

    if value_domain is not None:
        domain = _category_list(items, value_domain)
    elif level == "nominal" or all(is_number(v) for v in observed):
        domain = observed if level == "nominal" else sorted(observed)
    else:
        raise ValueError(f"{level} alpha on labels that are not numbers needs an ordered value_domain")
    if level in ("interval", "ratio") and not all(is_number(v) for v in domain):
        raise ValueError(f"{level} alpha needs numeric labels")

    def result(value: float | None, reason: str | None = None) -> Agreement:
        raters = max((len(item) for item in items), default=0) or None
        return Agreement(name, value, len(paired), len(items) - len(paired), raters,
                         len(domain), reason)

    if not items:
        return result(None, NO_ITEMS)
    if not paired:
        return result(None, "no item has 2 or more ratings: alpha is undefined")
    if len(observed) < 2:
        return result(None, "every rating is the same value: alpha is undefined")

    counts, package_domain = alpha_table(paired, domain, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = to_float(krippendorff.alpha(value_counts=counts, value_domain=package_domain,
                                            level_of_measurement=level))
    return result(value, None if value is not None else "alpha is not finite")


def alpha_table(paired: list[Sequence[Any]], domain: list[Any], level: str) -> tuple[np.ndarray, np.ndarray]:
    """The items x values count table alpha reads and the domain as the package takes it: nominal and ordinal
    distances depend only on the order of the domain, so codes do."""
    counts = _count_table(paired, {v: i for i, v in enumerate(domain)}).astype(float)
    return counts, (np.array(domain, dtype=float) if level in ("interval", "ratio") else np.arange(len(domain)))


def _integer_array(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.dtype.kind in "iu"


def cohen_kappa(
    a: Sequence[Any],
    b: Sequence[Any],
    weights: Literal["linear", "quadratic"] | None = None,
    labels: Sequence[Any] | None = None,
) -> Agreement:
    """Cohen's kappa (unweighted, linear or quadratic) via scikit-learn.

    Pairs where either side is missing are left out. Weighted kappa takes label distance
    from the position in `labels` (default: sorted labels).
    """
    if len(a) != len(b):
        raise ValueError(f"a and b differ in length ({len(a)} != {len(b)})")
    name = "cohen_kappa" + (f"_{weights}" if weights else "")
    if _integer_array(a) and _integer_array(b):
        # Integer codes cannot be missing: no pass over the pairs (a large report has hundreds of thousands).
        x, y = np.asarray(a).ravel(), np.asarray(b).ravel()
        n_pairs, seen = x.size, set(np.union1d(x, y).tolist())
    else:
        pairs = [(plain(x), plain(y)) for x, y in zip(a, b, strict=True) if not (is_missing(x) or is_missing(y))]
        x, y = zip(*pairs, strict=True) if pairs else ((), ())
        n_pairs, seen = len(pairs), {v for pair in pairs for v in pair}
    left_out = len(a) - n_pairs
    n_cat = len(labels) if labels is not None else len(seen)
    if not n_pairs:
        return Agreement(name, None, 0, left_out, 2, n_cat, NO_ITEMS)
    if labels is not None:
        unknown = seen - {plain(v) for v in labels}
        if unknown:
            raise ValueError(f"labels not in labels list: {sorted(map(repr, unknown))}")
    if len(seen) == 1:
        return Agreement(name, None, n_pairs, left_out, 2, n_cat,
                         "both raters use the same single category: kappa is undefined")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined cases are reported, not warned about
        value = to_float(cohen_kappa_score(x, y, weights=weights, labels=labels))
    reason = None if value is not None else "chance agreement is 1: kappa is undefined"
    return Agreement(name, value, n_pairs, left_out, 2, n_cat, reason)


def peer_pairs(campaign: np.ndarray, item: np.ndarray, rnd: np.ndarray,
               eligible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j), i != j, of eligible labels given to the same item in the same round
    of the same campaign, as two arrays of label indices (vectorised: a large report has millions)."""
    idx = np.flatnonzero(eligible)
    idx = idx[np.lexsort((rnd[idx], item[idx], campaign[idx]))]
    c, it, r = campaign[idx], item[idx], rnd[idx]
    starts_here = np.r_[True, (c[1:] != c[:-1]) | (it[1:] != it[:-1]) | (r[1:] != r[:-1])][:idx.size]
    starts = np.flatnonzero(starts_here)
    group = np.cumsum(starts_here) - 1
    size = np.diff(np.r_[starts, idx.size])[group]
    offset = np.arange(idx.size) - starts[group]
    firsts, seconds = [np.array([], int)], [np.array([], int)]
    for shift in range(1, int(size.max()) if idx.size else 1):
        # Rotating each group by `shift` pairs every label with another of its group exactly once.
        ok = shift < size
        firsts.append(idx[ok])
        seconds.append(idx[(starts[group] + (offset + shift) % size)[ok]])
    return np.concatenate(firsts), np.concatenate(seconds)


def cohen_kappa_by_pair(keys: np.ndarray, first: np.ndarray,
                        second: np.ndarray) -> list[tuple[tuple[int, ...], Agreement]]:
    """Cohen's kappa per rater pair: row n pairs label first[n] with second[n] under the pair named by
    keys[n] (a row of ints, e.g. campaign, rater, rater); one (key, kappa) per distinct key, in key order."""
    keys = np.asarray(keys)
    if not len(keys):
        return []
    group = _row_ranks(keys)
    order = np.argsort(group, kind="stable")  # each pair's rows in row order
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    bounds = np.r_[starts, len(keys)]
    return [(tuple(int(k) for k in keys[order[start]]), cohen_kappa(first[order[start:end]], second[order[start:end]]))
            for start, end in pairwise(bounds)]


def _row_ranks(keys: np.ndarray) -> np.ndarray:
    """One integer per row of an integer table, ordered as the rows sort (lexicographically): the columns'
    ranks combined while they fit in 63 bits, else np.unique over rows."""
    columns = [np.unique(column, return_inverse=True)[1].ravel() for column in keys.T]
    if np.prod([float(c.max()) + 1 for c in columns]) >= 2.0**62:
        return np.unique(keys, axis=0, return_inverse=True)[1].ravel()
    combined = np.zeros(len(keys), dtype=np.int64)
    for ranks in columns:
        combined = combined * (int(ranks.max()) + 1) + ranks
    return combined


def _pairwise(item: list[Any]) -> float | None:
    """Share of agreeing ordered rater pairs on one item."""
    n = len(item)
    if n < 2:
        return None
    return sum(c * (c - 1) for c in Counter(item).values()) / (n * (n - 1))


def percent_agreement(ratings_by_item: RatingsByItem) -> Agreement:
    """Mean over items of pairwise agreement, as a share in [0, 1] (no chance correction)."""
    items = _rated_items(ratings_by_item)
    cats = _category_list(items, None)
    counts = _count_table(items, {c: i for i, c in enumerate(cats)})
    n = counts.sum(axis=1)
    counts, pairs = counts[n >= 2], n[n >= 2]
    # Per item: agreeing ordered pairs over all ordered pairs, as _pairwise counts them.
    shares = (counts * (counts - 1)).sum(axis=1) / (pairs * (pairs - 1))
    raters = int(n.max()) if len(items) and n.max() else None
    reason = None if shares.size else (NO_ITEMS if not items else "no item has 2 or more ratings")
    value = float(shares.mean()) if shares.size else None
    return Agreement("percent_agreement", value, int(shares.size), len(items) - int(shares.size), raters,
                     len(cats), reason)


@dataclass(frozen=True)
class ItemAgreement(Result):
    index: int
    n_ratings: int
    modal_labels: tuple  # every label reaching the top count (more than one on a tie)
    modal_share: float | None  # top count / ratings
    pairwise: float | None  # share of agreeing rater pairs; None below 2 ratings


def per_item_agreement(ratings_by_item: RatingsByItem) -> list[ItemAgreement]:
    """Modal-label share and pairwise agreement of each item."""
    out = []
    for index, item in enumerate(_rated_items(ratings_by_item)):
        votes = Counter(item)
        top = max(votes.values(), default=0)
        modal = tuple(label for label, count in votes.items() if count == top)
        out.append(ItemAgreement(index, len(item), modal, top / len(item) if item else None,
                                 _pairwise(item)))
    return out


# Upper bounds, inclusive; anything below 0 is "poor".
LANDIS_KOCH_BANDS = (
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)


def landis_koch_band(value: float | None) -> str:
    """Landis and Koch (1977) label of a kappa-like value; None/NaN -> "undefined"."""
    value = to_float(value)
    if value is None:
        return "undefined"
    if value < 0:
        return "poor"
    if value > 1 + 1e-9:
        raise ValueError(f"agreement above 1: {value}")
    return next(label for upper, label in LANDIS_KOCH_BANDS if value <= upper + 1e-12)
