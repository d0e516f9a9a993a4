"""The report's crowd, human-anchored and alternative-annotator sections, in every format."""
import numpy as np
import pytest
from ppi_py import ppi_mean_ci

from metrics import alt_test, classical_mean, dawid_skene, majority_label, ppi_mean
from metrics.prediction_powered import ALL_LABELLED
from reports.build import build_report
from reports.contract import ReportOptions
from reports.render import render
from tests.reports.test_build import MC_FORM, data

RATING_FORM = {"primary": "overall", "questions": [{"key": "overall", "type": "scale", "scale": {"min": 1, "max": 5}}]}
OPTIONS = ReportOptions(n_resamples=20)


def mc_study(seed=0, n_items=120, n_labelled=60, settings=None):
    """Three annotators on the first `n_labelled` of `n_items` multiple-choice items (ann right 90% of the time,
    bob 75%, cid 55%); a judge run and a weaker model run on every item; gold on every item."""
    rng = np.random.default_rng(seed)
    gold = {n: "ABCD"[n % 4] for n in range(n_items)}
    items = [(n, 1, gold[n], {"n_options": 4}) for n in range(n_items)]
    ann = []
    for n in range(n_labelled):
        for annotator, accuracy in ((10, 0.9), (11, 0.75), (12, 0.55)):
            value = gold[n] if rng.random() < accuracy else "ABCD"[(n + 1 + rng.integers(3)) % 4]
            ann.append((n, annotator, value, 1, True, 1, 3.0))
    preds = []
    for n in range(n_items):
        preds.append((7, n, gold[n] if rng.random() < 0.9 else "A", None))
        preds.append((8, n, gold[n] if rng.random() < 0.6 else "B", None))
    runs = [(7, "judge", "generate", {}, [1]), (8, "m", "generate", {}, [1])]
    d = data([(1, "t1", MC_FORM)], items, ann, preds, runs)
    d.campaigns[0]["settings"][-1].update(settings or {})
    return d, gold, ann, preds


def test_a_typical_person_and_the_aggregated_crowd_are_two_named_figures():
    d, gold, ann, _ = mc_study(settings={"aggregation": "dawid_skene"})
    row = build_report(d, OPTIONS)["crowd"][0]
    people = {}
    for item, who, value, *_ in ann:
        people.setdefault(who, []).append(value == gold[item])
    assert row["typical_person_accuracy"] == pytest.approx(np.mean([np.mean(v) for v in people.values()]))
    model = dawid_skene([(item, who, value) for item, who, value, *_ in ann])
    expected = np.mean([label == gold[item] for item, label in zip(model.items, model.aggregate, strict=True)])
    assert row["rule"] == "dawid_skene" and "Dawid-Skene" in row["rule_text"]
    assert row["crowd_accuracy"] == row["dawid_skene_accuracy"] == pytest.approx(expected)
    assert row["crowd_accuracy"] != row["typical_person_accuracy"]
    competence = {a["annotator"]: a["competence"] for a in row["annotators"]}
    assert competence["ann"] > competence["bob"] > competence["cid"]


def test_majority_vote_stays_the_default_rule():
    d, gold, ann, _ = mc_study()
    row = build_report(d, OPTIONS)["crowd"][0]
    assert row["rule"] == "majority" and row["crowd_accuracy"] == row["majority_accuracy"]
    assert row["model"] == "dawid_skene" and row["dawid_skene_accuracy"] is not None


def test_every_item_with_gold_gives_the_classical_interval_not_a_narrower_one():
    """n = N (gold on every item): a labelled item is not counted again among the judge-only ones, so the model's
    accuracy row is the classical interval, its effective n is N, and its method says so."""
    d, gold, ann, preds = mc_study()
    section = build_report(d, OPTIONS)["human_anchored"]
    model = {item: answer for run, item, answer, _ in preds if run == 8}
    row = next(r for r in section["models"] if r["judge_run_id"] == 7 and r["model_run_id"] == 8)
    expected = classical_mean([float(model[i] == gold[i]) for i in sorted(gold)], 0.95)
    assert row["n"] == row["N"] == 120 and row["lam"] == 0
    assert (row["anchored_low"], row["anchored_high"], row["anchored_width"]) == pytest.approx(
        (expected.low, expected.high, expected.width))
    assert row["anchored_width"] == row["classical_width"] and row["effective_n"] == 120
    assert row["method"].startswith("classical, every item labelled: ")
    html = render(build_report(d, OPTIONS), "html")
    assert "<td class=\"text\">classical, every item labelled</td>" in html and ALL_LABELLED in html


def test_half_the_items_labelled_passes_only_the_other_half_as_judge_only():
    """n / N = 0.5: the people's row is ppi-python's interval with the 60 unlabelled items as its second sample."""
    d, gold, ann, preds = mc_study()
    section = build_report(d, OPTIONS)["human_anchored"]
    judge = {item: answer for run, item, answer, _ in preds if run == 7}
    votes = {}
    for item, _, value, *_ in ann:
        votes.setdefault(item, []).append(value)
    right = {i: float(majority_label(v) == gold[i]) for i, v in votes.items()}
    labelled, unlabelled = sorted(right), [i for i in sorted(gold) if i not in right]
    f = [float(judge[i] == gold[i]) for i in labelled]
    f_unl = [float(judge[i] == gold[i]) for i in unlabelled]
    y = [right[i] for i in labelled]
    low, high = ppi_mean_ci(np.array(y), np.array(f), np.array(f_unl), alpha=0.05)
    human = next(r for r in section["humans"] if r["judge_run_id"] == 7)
    assert human["n"] == 60 and human["N"] == 120 and human["_curve"]
    assert (human["anchored_low"], human["anchored_high"]) == pytest.approx((low[0], high[0]))
    assert human["lam"] == pytest.approx(ppi_mean(y, f, f_unl, confidence=0.95).lam)
    assert human["effective_n"] <= 120
    assert human["classical_width"] == pytest.approx(human["_curve"][-1]["classical"])


def test_mean_human_rating_with_a_rating_judge_and_inclusion_weights():
    rng = np.random.default_rng(3)
    items = [(n, 1, None, {}) for n in range(200)]
    truth = rng.integers(1, 6, 200)
    ann = [(n, who, int(np.clip(truth[n] + rng.integers(-1, 2), 1, 5)), 1, True, 1, 2.0)
           for n in range(80) for who in (10, 11)]
    preds = [(7, n, "", float(truth[n]) + rng.normal(0, 0.5)) for n in range(200)]
    d = data([(1, "t1", RATING_FORM)], items, ann, preds, [(7, "judge", "rating", {}, [1])])
    d.inclusion = {n: 0.4 for n in range(80)}
    row = build_report(d, OPTIONS)["human_anchored"]["humans"][0]
    means = [np.mean([v for i, _, v, *_ in ann if i == n]) for n in range(80)]
    judge = {i: r for _, i, _, r in preds}
    expected = ppi_mean(means, [judge[n] for n in range(80)], [judge[n] for n in range(80, 200)], confidence=0.95,
                        inclusion_probabilities=[0.4] * 80)
    assert row["estimand"] == "mean human rating" and row["weighted"]
    assert row["anchored_estimate"] == pytest.approx(expected.human_anchored.estimate)
    assert row["anchored_width"] < row["classical_width"]


def test_the_alternative_annotator_test_takes_the_epsilon_of_the_annotators_kind():
    d, gold, ann, preds = mc_study(settings={"annotator_kind": "expert"})
    tests = build_report(d, OPTIONS)["alt_test"]["tests"]
    row = next(t for t in tests if t["judge_run_id"] == 7)
    human = {}
    for item, who, value, *_ in ann:
        human.setdefault(who, {})[item] = value
    expected = alt_test(human, {i: a for r, i, a, _ in preds if r == 7}, epsilon=0.2)
    assert row["epsilon"] == 0.2 and row["annotator_kind"] == "expert"
    assert row["winning_rate"] == expected.winning_rate
    assert row["advantage_probability"] == pytest.approx(expected.advantage_probability)
    assert [c["met"] for c in row["checks"]] == [True, True, True]


def test_every_format_carries_the_sections():
    d, *_ = mc_study()
    report = build_report(d, OPTIONS)
    csv = render(report, "csv")
    for section in ("crowd,", "crowd.annotators,", "human_anchored.humans,", "human_anchored.models,",
                    "human_anchored.gaps,", "alt_test,", "alt_test.annotators,"):
        assert f"\n{section}" in csv, section
    assert "typical_person_accuracy" in csv and "crowd_accuracy" in csv and "winning_rate" in csv
    import csv as reader
    import io

    rows = list(reader.DictReader(io.StringIO(csv)))
    assert all(r["undefined_reason"] for r in rows if r["value"] == "")
    html = render(report, "html")
    for key in ('id="crowd"', 'id="competence"', 'id="human_anchored_humans"', 'id="alt_test"',
                "Interval width against human labels used", "A typical person"):
        assert key in html, key
    latex = render(report, "latex")
    assert "alternative annotator test" in latex and "human-anchored (PPI++)" in latex
    assert '"alt_test"' in render(report, "json") and '"_curve"' not in render(report, "json")


def test_human_anchored_rows_are_flagged_from_their_coverage_and_the_report_says_how():
    """20 labelled items with a reader's minimum of 10: no count flags the gap rows, their simulated coverage
    does (the gap's interval at n = 20 covers about 0.90)."""
    d, *_ = mc_study(n_labelled=20, n_items=200)
    report = build_report(d, ReportOptions(n_resamples=20, min_items=10))
    gaps = report["human_anchored"]["gaps"]
    assert gaps and all(r["n"] == 20 for r in gaps)
    assert any("simulated coverage" in (r["small_sample"] or "") for r in gaps)
    assert all(r["coverage"] is not None and r["classical_coverage"] is not None for r in gaps)
    flags = next(s["text"] for s in report["how_to_read"] if s["topic"] == "flags")
    assert "2000 campaigns simulated" in flags and "0.93" in flags
