"""The report's gap while labels arrive: confidence sequences beside the fixed-n intervals, the verdict under the
reader's margin, in every format, and the reading guide's words on them."""
import numpy as np
import pytest

from metrics import ppi_mean
from metrics.sequential import asymptotic_sequence, betting_sequence
from reports.build import build_report
from reports.contract import ReportOptions
from reports.render import render
from tests.reports.test_build import data
from tests.reports.test_human_anchored import OPTIONS, RATING_FORM, mc_study


def rating_study(gap=0.0, n_items=300, n_labelled=200, seed=3):
    """Two people rate the first `n_labelled` items on 1-5; a judge run near their truth; a model run `gap` below."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(2, 5, n_items)
    items = [(n, 1, None, {}) for n in range(n_items)]
    ann = [(n, who, int(np.clip(truth[n] + rng.integers(-1, 2), 1, 5)), 1, True, 1, 2.0)
           for n in range(n_labelled) for who in (10, 11)]
    preds = [(7, n, "", float(np.clip(truth[n] + rng.normal(0, 0.4), 1, 5))) for n in range(n_items)]
    preds += [(8, n, "", float(np.clip(truth[n] - gap + rng.normal(0, 0.3), 1, 5))) for n in range(n_items)]
    runs = [(7, "judge", "rating", {}, [1]), (8, "m", "rating", {}, [1])]
    return data([(1, "t1", RATING_FORM)], items, ann, preds, runs), ann, preds


def gap_row(report, judge=7, model=8):
    return next(r for r in report["sequential"]["gaps"] if r["judge_run_id"] == judge and r["model_run_id"] == model)


def test_rating_gap_sequences_are_metrics_on_the_seeded_order():
    d, ann, preds = rating_study(gap=0.6)
    row = gap_row(build_report(d, OPTIONS))
    judge = {i: r for run, i, _, r in preds if run == 7}
    model = {i: r for run, i, _, r in preds if run == 8}
    human = {n: np.mean([v for i, _, v, *_ in ann if i == n]) for n in range(200)}
    order = np.random.default_rng(OPTIONS.seed).permutation(200)
    y = np.array([human[i] - model[i] for i in order])
    f = np.array([judge[i] - model[i] for i in order])
    f_all = np.array([judge[i] - model[i] for i in range(300)])
    anchored = asymptotic_sequence(y, f, f_all, confidence=0.95, t_opt=300)
    assert row["n"] == 200 and row["N"] == 300 and row["t_opt"] == 300
    assert row["cs_anchored_low"] == pytest.approx(anchored.low) and row["cs_anchored_lam"] == anchored.lam
    assert row["cs_classical_high"] == pytest.approx(asymptotic_sequence(y, confidence=0.95, t_opt=300).high)
    assert row["cs_betting_low"] == pytest.approx(betting_sequence(y, confidence=0.95, lower=-4, upper=4,
                                                                   population=300, grid_points=401).low)
    fixed = ppi_mean(y, f, f_all, confidence=0.95)
    assert row["fixed_anchored_low"] == pytest.approx(fixed.human_anchored.low)
    # the sequence is wider than the interval valid at this one n, and holds at every n
    assert row["cs_anchored_width"] > fixed.human_anchored.width
    assert row["verdict"] == "separated" and row["path"][-1]["t"] == 200


def test_the_margin_decides_equivalence():
    d, *_ = rating_study(gap=0.0, n_items=600, n_labelled=500)
    narrow = gap_row(build_report(d, ReportOptions(n_resamples=20, equivalence_margin=0.01)))
    wide = gap_row(build_report(d, ReportOptions(n_resamples=20, equivalence_margin=1.0)))
    assert wide["verdict"] == "equivalent" and wide["margin"] == 1.0
    assert narrow["verdict"] == "continue"
    assert narrow["next_labels"] == "more items" and narrow["items_to_raters"] > 1


def test_margin_bounds():
    for bad in (-0.1, 10.5):
        with pytest.raises(ValueError, match="equivalence_margin"):
            ReportOptions(equivalence_margin=bad)


def test_multiple_choice_gap_and_active_weights():
    d, *_ = mc_study()
    row = gap_row(build_report(d, OPTIONS))
    assert row["estimand"] == "human minus model accuracy" and row["n"] == 60 and row["N"] == 120
    assert row["cs_betting_low"] is not None and row["verdict"] in ("separated", "equivalent", "continue")
    d.inclusion = {n: 0.5 for n in range(60)}
    weighted = gap_row(build_report(d, OPTIONS))
    assert weighted["weighted"] and weighted["lead"] == "active" and weighted["cs_active_low"] is not None
    assert weighted["cs_betting_low"] is None and "unequal" in weighted["undefined"]["cs_betting_low"]


def test_every_format_and_the_reading_guide():
    d, *_ = rating_study(gap=0.6)
    report = build_report(d, OPTIONS)
    guide = next(p["text"] for p in report["how_to_read"] if p["topic"] == "watching the gap")
    assert "every number of labels" in guide and "fixed in advance" in guide
    assert "\nsequential," in render(report, "csv") and ",verdict," in render(report, "csv")
    html = render(report, "html")
    assert 'id="sequential"' in html and "valid only at a number of labels fixed in advance" in html
    assert "confidence sequences" in render(report, "latex")
