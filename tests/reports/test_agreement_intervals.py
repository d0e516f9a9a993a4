"""Fleiss' kappa and Krippendorff's alpha carry their intervals in every format of the report."""
from metrics.agreement_intervals import METHOD, fleiss_kappa_interval
from reports.build import build_report
from reports.contract import ReportOptions
from reports.render import render
from tests.reports.test_human_anchored import mc_study


def test_agreement_rows_carry_bootstrap_and_jackknife_intervals_in_every_format():
    d, gold, ann, _ = mc_study()
    report = build_report(d, ReportOptions(n_resamples=50))
    row = next(r for r in report["agreement"]["campaigns"] if r["primary"])
    labels = {}
    for item, _, value, *_ in ann:
        labels.setdefault(item, []).append(value)
    expected = fleiss_kappa_interval(list(labels.values()), n_resamples=50, seed=report["options"]["seed"])
    assert row["fleiss_kappa_low"] < row["fleiss_kappa"] < row["fleiss_kappa_high"]
    assert row["fleiss_kappa_jackknife_low"] == expected.jackknife_low
    assert row["krippendorff_alpha_low"] < row["krippendorff_alpha"] < row["krippendorff_alpha_high"]
    assert row["interval_method"] == METHOD
    for fmt, needle in (("csv", "fleiss_kappa_jackknife_low"), ("json", "krippendorff_alpha_high"),
                        ("html", "Jackknife low"), ("latex", "Jackknife low")):
        assert needle in render(report, fmt), fmt
    assert "bootstrap over items, bias-corrected and accelerated" in render(report, "html")


def test_how_to_read_names_the_agreement_and_human_anchored_interval_methods():
    d, *_ = mc_study()
    report = build_report(d, ReportOptions(n_resamples=20))
    text = {s["topic"]: s["text"] for s in report["how_to_read"]}
    assert METHOD in text["intervals"] and "method named on each row" in text["intervals"]
    assert "a labelled item is never counted again" in text["fewer labels"]
