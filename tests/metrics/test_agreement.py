import itertools
import math

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

from metrics.agreement import (
    cohen_kappa,
    cohen_kappa_by_pair,
    fleiss_kappa,
    fleiss_kappa_counts,
    krippendorff_alpha,
    landis_koch_band,
    peer_pairs,
    per_item_agreement,
    percent_agreement,
)

FAST = settings(max_examples=50, deadline=None)


def count_table(items, n_cat):
    return np.array([np.bincount(item, minlength=n_cat) for item in items])


def items_from_table(table):
    """Per-item label lists from a subjects x categories count table."""
    return [[c for c, count in enumerate(row) for _ in range(count)] for row in table]


# Fleiss (1971) example as reproduced on Wikipedia ("Fleiss' kappa", worked example):
# 10 subjects, 14 raters, 5 categories; kappa = 0.210, P-bar = 0.378.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_fleiss_matches_published_example():
    result = fleiss_kappa(items_from_table(WIKIPEDIA_FLEISS), given="labels")
    assert round(result.value, 3) == 0.210
    assert (result.n_items, result.n_left_out, result.n_raters) == (10, 0, 14)


def test_randolph_uses_stated_category_count():
    items = items_from_table(WIKIPEDIA_FLEISS)
    # P-bar = 0.3783 (Wikipedia's per-subject P_i summed / 10); chance = 1 / categories.
    p_bar = sum([1.000, 0.253, 0.308, 0.440, 0.330, 0.462, 0.242, 0.176, 0.286, 0.286]) / 10
    assert (fleiss_kappa(items, "randolph", categories=range(5), given="labels").value
            == pytest.approx((p_bar - 0.2) / 0.8, abs=1e-3))
    # Two categories nobody used change Randolph's kappa (chance 1/7), not Fleiss'.
    seven = fleiss_kappa(items, "randolph", categories=range(7), given="labels").value
    assert seven == pytest.approx((p_bar - 1 / 7) / (6 / 7), abs=1e-3)
    assert (fleiss_kappa(items, categories=range(7), given="labels").value
            == pytest.approx(fleiss_kappa(items, given="labels").value))
    with pytest.raises(ValueError, match="categories"):
        fleiss_kappa(items, "randolph", given="labels")


ratings_grid = st.integers(2, 4).flatmap(lambda n_cat: st.tuples(
    st.just(n_cat),
    st.integers(2, 6).flatmap(lambda n_raters: st.lists(
        st.lists(st.integers(0, n_cat - 1), min_size=n_raters, max_size=n_raters), min_size=1, max_size=15)),
))


@FAST
@given(ratings_grid)
def test_fleiss_and_randolph_match_statsmodels(case):
    n_cat, items = case
    table = count_table(items, n_cat)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = inter_rater.fleiss_kappa(table, method="fleiss")
    ours = fleiss_kappa(items, categories=list(range(n_cat)), given="labels")
    if math.isnan(expected):
        assert ours.value is None and "same category" in ours.undefined_reason
    else:
        assert ours.value == pytest.approx(expected, abs=1e-12)
    randolph = inter_rater.fleiss_kappa(table, method="randolph")
    assert (fleiss_kappa(items, "randolph", categories=list(range(n_cat)), given="labels").value
            == pytest.approx(randolph, abs=1e-12))


@FAST
@given(ratings_grid, st.data())
def test_fleiss_leaves_out_items_with_missing_ratings(case, data):
    n_cat, items = case
    n_raters = len(items[0])
    holes = data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    assume(sum(holes) < len(items) / 2)  # full items stay the modal count
    ragged = [item[:-1] + [None] if hole else item for item, hole in zip(items, holes, strict=True)]
    full = [item for item, hole in zip(items, holes, strict=True) if not hole]
    ours = fleiss_kappa(ragged, categories=list(range(n_cat)), given="labels")
    assert (ours.n_items, ours.n_left_out, ours.n_raters) == (len(full), sum(holes), n_raters)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = inter_rater.fleiss_kappa(count_table(full, n_cat))
    assert (ours.value is None) == math.isnan(expected)
    if ours.value is not None:
        assert ours.value == pytest.approx(expected, abs=1e-12)


def test_fleiss_edge_cases_explain_themselves():
    same = fleiss_kappa([["yes", "yes", "yes"], ["yes", "yes", "yes"]], given="labels")
    assert same.value is None and same.undefined_reason == "every rating is the same category: kappa is undefined"
    assert fleiss_kappa([], given="labels").undefined_reason == "no items"
    assert fleiss_kappa([[1], [2], [None, 1]], given="labels").undefined_reason == "fewer than 2 raters per item"
    assert fleiss_kappa([[], []], given="labels").undefined_reason == "fewer than 2 raters per item"
    assert "exactly 5" in fleiss_kappa([[1, 2], [1, 1]], n_raters=5, given="labels").undefined_reason
    assert fleiss_kappa([["a", "a"]], "randolph", categories=["a"], given="labels").value is None
    assert fleiss_kappa([["a", "a"]], "randolph", categories=["a", "b"], given="labels").value == 1.0
    with pytest.raises(ValueError, match="not in categories"):
        fleiss_kappa([["a", "c"]], categories=["a", "b"], given="labels")


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C:
# 4 observers x 12 units, values 1-5, with missing values.
K2011 = [  # rows: observers A-D; columns: units 1-12
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
K2011_BY_ITEM = [list(unit) for unit in zip(*K2011, strict=True)]


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_matches_published_example(level, published):
    result = krippendorff_alpha(K2011_BY_ITEM, level)
    assert round(result.value, 3) == published
    assert (result.n_items, result.n_left_out, result.n_raters) == (11, 1, 4)  # unit 12 has one value


@FAST
@given(
    st.integers(2, 5).flatmap(lambda raters: st.integers(1, 12).flatmap(lambda units: st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=units, max_size=units),
        min_size=raters, max_size=raters))),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
)
def test_krippendorff_matches_package(by_rater, level):
    reliability = np.array([[np.nan if v is None else v for v in row] for row in by_rater], dtype=float)
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement=level)
    except ValueError:
        expected = math.nan
    ours = krippendorff_alpha([list(unit) for unit in zip(*by_rater, strict=True)], level)
    if math.isnan(expected):
        assert ours.value is None and ours.undefined_reason
    else:
        assert ours.value == pytest.approx(expected, abs=1e-9)


@FAST
@given(st.lists(st.lists(st.sampled_from(["low", "mid", "high", None]), min_size=3, max_size=3),
                min_size=2, max_size=10))
def test_krippendorff_string_labels(units):
    ours = krippendorff_alpha(units)
    by_rater = np.array([["nan" if v is None else v for v in unit] for unit in units]).T
    try:
        expected = krippendorff.alpha(reliability_data=by_rater, level_of_measurement="nominal")
    except ValueError:
        expected = math.nan
    assert (ours.value is None) == math.isnan(expected)
    if ours.value is not None:
        assert ours.value == pytest.approx(expected, abs=1e-9)
        # Ordinal on words follows the order given, same as on the ranks 1 < 2 < 3.
        rank = {"low": 1, "mid": 2, "high": 3, None: None}
        ordinal = krippendorff_alpha(units, "ordinal", value_domain=["low", "mid", "high"]).value
        assert ordinal == pytest.approx(krippendorff_alpha([[rank[v] for v in u] for u in units], "ordinal").value)


def test_krippendorff_edge_cases():
    assert krippendorff_alpha([]).undefined_reason == "no items"
    assert "2 or more ratings" in krippendorff_alpha([[1], [2, None]]).undefined_reason
    same = krippendorff_alpha([[3, 3], [3, 3, None]], "interval")
    assert same.value is None and "same value" in same.undefined_reason
    with pytest.raises(ValueError, match="value_domain"):
        krippendorff_alpha([["a", "b"]], "ordinal")
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a", "b"]], "interval", value_domain=["a", "b"])


def test_cohen_matches_textbook_example():
    # Wikipedia "Cohen's kappa": 50 proposals, 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no;
    # p_o = 0.7, p_e = 0.5, kappa = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b).value == pytest.approx(0.4)


def test_weighted_cohen_against_formula():
    a = [0, 1, 2, 2, 1, 0, 2, 1]
    b = [0, 2, 2, 1, 1, 1, 2, 0]
    observed = np.zeros((3, 3))
    for x, y in zip(a, b, strict=True):
        observed[x, y] += 1
    expected = np.outer(observed.sum(1), observed.sum(0)) / len(a)
    for weights, w in [("linear", lambda i, j: abs(i - j)), ("quadratic", lambda i, j: (i - j) ** 2)]:
        wm = np.fromfunction(w, (3, 3))
        kappa = 1 - (wm * observed).sum() / (wm * expected).sum()
        assert cohen_kappa(a, b, weights).value == pytest.approx(kappa)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@FAST
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40),
    st.sampled_from([None, "linear", "quadratic"]),
)
def test_cohen_matches_sklearn(pairs, weights):
    a, b = zip(*pairs, strict=True)
    expected = cohen_kappa_score(a, b, weights=weights, labels=[0, 1, 2, 3])
    for ours in (cohen_kappa(a, b, weights, labels=[0, 1, 2, 3]),
                 cohen_kappa(np.array(a), np.array(b), weights, labels=[0, 1, 2, 3])):  # integer codes
        assert ours.n_items == len(pairs)
        if math.isnan(expected):
            assert ours.value is None and "undefined" in ours.undefined_reason
        else:
            assert ours.value == pytest.approx(expected, abs=1e-12)


def test_cohen_edge_cases():
    result = cohen_kappa(["a", None, "b", "a"], ["a", "b", float("nan"), "b"])
    assert (result.n_items, result.n_left_out) == (2, 2)
    assert cohen_kappa([], []).undefined_reason == "no items"
    assert "same single category" in cohen_kappa([1, 1, 1], [1, 1, 1]).undefined_reason
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([1, 2], [1])


@FAST
@given(st.lists(st.lists(st.one_of(st.none(), st.integers(0, 2)), max_size=6), max_size=12))
def test_percent_and_per_item_agreement_against_brute_force(items):
    present = [[v for v in item if v is not None] for item in items]
    shares = []
    for item in present:
        if len(item) >= 2:
            pairs = list(itertools.combinations(item, 2))
            shares.append(sum(x == y for x, y in pairs) / len(pairs))
    ours = percent_agreement(items)
    assert ours.n_items == len(shares) and ours.n_left_out == len(items) - len(shares)
    assert ours.value == (pytest.approx(np.mean(shares)) if shares else None)
    for row, item in zip(per_item_agreement(items), present, strict=False):
        assert row.n_ratings == len(item)
        if item:
            top = max(item.count(v) for v in item)
            assert row.modal_share == pytest.approx(top / len(item))
            assert set(row.modal_labels) == {v for v in item if item.count(v) == top}
        else:
            assert row.modal_share is None and row.modal_labels == ()


@pytest.mark.parametrize("value, band", [
    (-0.01, "poor"), (0.0, "slight"), (0.20, "slight"), (0.21, "fair"), (0.40, "fair"), (0.41, "moderate"),
    (0.60, "moderate"), (0.61, "substantial"), (0.80, "substantial"), (0.81, "almost perfect"),
    (1.0, "almost perfect"), (None, "undefined"), (float("nan"), "undefined"),
])
def test_landis_koch_bands(value, band):
    assert landis_koch_band(value) == band


def test_landis_koch_rejects_values_above_one():
    with pytest.raises(ValueError):
        landis_koch_band(1.2)


def test_fleiss_takes_a_count_table_only_when_told():
    """Fleiss 1971 (Wikipedia's worked example) as statsmodels takes it: items x categories counts."""
    expected = inter_rater.fleiss_kappa(np.array(WIKIPEDIA_FLEISS))
    assert round(expected, 4) == 0.2099
    assert fleiss_kappa(WIKIPEDIA_FLEISS, given="counts").value == pytest.approx(expected, abs=1e-12)
    table = fleiss_kappa_counts(np.array(WIKIPEDIA_FLEISS))
    assert table.value == pytest.approx(expected, abs=1e-12)
    assert (table.n_items, table.n_raters, table.n_categories) == (10, 14, 5)
    # statsmodels' own aggregation of raters-as-columns data gives the same table and kappa.
    raters = np.array([item for item in items_from_table(WIKIPEDIA_FLEISS)])
    aggregated, _ = inter_rater.aggregate_raters(raters)
    assert fleiss_kappa(aggregated, given="counts").value == pytest.approx(expected, abs=1e-12)
    assert fleiss_kappa(items_from_table(WIKIPEDIA_FLEISS), given="labels").value == pytest.approx(expected, abs=1e-12)
    # The same rows said to be labels are read as labels: 0.0234.
    assert fleiss_kappa(WIKIPEDIA_FLEISS, given="labels").value == pytest.approx(0.0234, abs=1e-4)
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa_counts([[1, 2], [3, 3]])
    with pytest.raises(ValueError, match="whole counts"):
        fleiss_kappa_counts([[1.5, 0.5], [1, 1]])
    with pytest.raises(ValueError, match="neither categories"):
        fleiss_kappa(WIKIPEDIA_FLEISS, given="counts", categories=range(5))
    with pytest.raises(ValueError, match="'labels' or 'counts'"):
        fleiss_kappa(WIKIPEDIA_FLEISS, given="table")


# Count tables of 3 raters over 4 options, one with a zero cell and one with none: shapes that a list of labels
# could have too.
THREE_RATERS_FOUR_OPTIONS = [[3, 0, 0, 0], [0, 3, 0, 0], [1, 2, 0, 0], [0, 0, 2, 1], [0, 1, 1, 1]]
NO_ZERO_CELL = [[2, 1, 2], [1, 3, 1], [1, 1, 3], [2, 2, 1]]


@pytest.mark.parametrize("table", [THREE_RATERS_FOUR_OPTIONS, NO_ZERO_CELL])
def test_fleiss_never_guesses_whether_it_got_counts_or_labels(table):
    expected = inter_rater.fleiss_kappa(np.array(table))
    for form in (table, np.array(table)):
        assert fleiss_kappa(form, given="counts").value == pytest.approx(expected, abs=1e-12)
        # Read as labels (each row one item's labels) the same rows give another figure, and only when asked.
        as_labels = fleiss_kappa(form, given="labels")
        assert as_labels.value == pytest.approx(inter_rater.fleiss_kappa(inter_rater.aggregate_raters(table)[0]))
        assert as_labels.value != pytest.approx(expected)
        # Without saying which, the call is refused: no shape is read as either by default.
        with pytest.raises(TypeError, match="given"):
            fleiss_kappa(form)


label_rows = st.lists(st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 2), st.booleans()), max_size=40)


@FAST
@given(label_rows)
def test_peer_pairs_are_every_ordered_pair_of_labels_on_one_item_in_one_round(rows):
    campaign, item, rnd, eligible = (np.array([r[k] for r in rows], dtype=bool if k == 3 else np.int64)
                                     for k in range(4))
    first, second = peer_pairs(campaign, item, rnd, eligible)
    expected = sorted((i, j) for i, j in itertools.permutations(range(len(rows)), 2)
                      if eligible[i] and eligible[j] and rows[i][:3] == rows[j][:3])
    assert sorted(zip(first.tolist(), second.tolist(), strict=True)) == expected


@FAST
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)), max_size=60))
def test_cohen_kappa_by_pair_matches_sklearn_on_each_pair(rows):
    keys = np.array([[r[0], 7] for r in rows], dtype=np.int64).reshape(-1, 2)
    first, second = (np.array([r[k] for r in rows], dtype=np.int64) for k in (1, 2))
    result = cohen_kappa_by_pair(keys, first, second)
    assert [key for key, _ in result] == sorted({(r[0], 7) for r in rows})
    for (pair, _), kappa in result:
        mine = [r for r in rows if r[0] == pair]
        a, b = [r[1] for r in mine], [r[2] for r in mine]
        if len(set(a) | set(b)) == 1:
            assert kappa.value is None
            continue
        with np.errstate(all="ignore"):
            expected = cohen_kappa_score(a, b)
        assert kappa.n_items == len(mine)
        if math.isfinite(expected):
            assert kappa.value == pytest.approx(expected)
