"""No figure reads better than the data allow: DiQAD's correlations of the predicted class, counted on the items
they are from. Statistics are checked against scipy."""
import csv
import io

import pytest
from scipy import stats

from reports.build import build_report, public
from reports.contract import ReportOptions
from reports.render import render
from reports.render.tables import diqad_tables
from tests.reports.test_build import SCORE_FORM, data


# ---------------------------------------------------------------- DiQAD's correlations


def diqad_report(min_items=30):
    """A trained classifier right on every one of 20 test items, with probability-weighted expected ratings that
    are not its classes; no person rated these items."""
    gold = [2, 1, 0, 2, 1] * 4
    expected = {2: 1.8, 1: 1.1, 0: 0.3}
    items = [(n, 1, g, {}) for n, g in enumerate(gold)]
    ratings = [expected[g] + (0.05 if n % 3 == 0 else 0) * (1 if g < 2 else -1) for n, g in enumerate(gold)]
    d = data([(1, "quality", SCORE_FORM)], items, [],
             [(3, n, str(g), r) for n, (g, r) in enumerate(zip(gold, ratings))],
             [(3, "classifier", "classify", {}, [1])])
    return build_report(d, ReportOptions(n_resamples=10, min_items=min_items)), gold, ratings


def test_diqad_correlates_the_predicted_class_and_counts_the_test_items():
    report, gold, ratings = diqad_report()
    row = report["ratings"]["models"][0]
    # DiQAD: Spearman and Pearson of the model's predictions (its classes) against the human labels (SciPy).
    assert row["gold_spearman"] == pytest.approx(stats.spearmanr(gold, gold).statistic) == 1.0
    assert row["gold_pearson"] == pytest.approx(stats.pearsonr(gold, gold).statistic) == 1.0
    # The expected ratings gave lower figures (what the table showed before).
    assert stats.spearmanr(ratings, gold).statistic < 0.99 and stats.pearsonr(ratings, gold).statistic < 0.999
    assert "predicted class against the gold label" in row["gold_correlation_of"]
    # The figures against gold rest on the 20 test items; no person rated them.
    assert row["n_gold"] == 20 and row["n_pairs"] == 0
    assert row["gold_small_sample"] == "small sample: 20 items with gold < 30"
    table = diqad_tables(public(report))[0]
    assert table.header[-1] == "Items" and table.rows[0][-1].text() == "20"
    assert {c.flag for c in table.rows[0][1:-1]} == {"small sample: 20 items with gold < 30"}
    assert table.note.startswith("Spearman and Pearson: the predicted class against the gold label")
    latex = render(report, "latex")
    assert "small sample: 20 items with gold < 30" in latex and "0 items < 30" not in latex
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    spearman = next(r for r in rows if r["metric"] == "gold_spearman")
    assert spearman["flag"] == "small sample: 20 items with gold < 30"
    # Enough test items: no flag on the gold figures.
    report, _, _ = diqad_report(min_items=20)
    assert report["ratings"]["models"][0]["gold_small_sample"] is None
