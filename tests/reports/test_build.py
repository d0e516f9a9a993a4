"""reports.build on plain rows (no database): undefined figures, annotators and QC, pairwise, ratings
against gold."""
import json

import numpy as np
import pytest

from metrics import bradley_terry, classification_metrics, cohen_kappa, elo
from reports.build import build_report, public
from reports.contract import ReportData, ReportOptions
from reports.render import render
from reports.render.tables import DIQAD_COLUMNS, diqad_tables

MC_FORM = {"primary": "answer", "questions": [{"key": "answer", "type": "single_choice", "options": "item"}]}
PAIR_FORM = {"primary": "verdict", "questions": [{"key": "verdict", "type": "single_choice", "options": [
    {"value": v} for v in ("1", "2", "both", "neither")]}]}
SCORE_FORM = {"primary": "score", "questions": [{"key": "score", "type": "single_choice", "options": [
    {"value": 2}, {"value": 1}, {"value": 0}, {"value": -1, "excludes": True}]}]}


def data(tasks, items, annotations=(), predictions=(), runs=(), gold=None, qc=(), batches=None):
    """tasks: [(id, slug, form)]; items: [(id, task id, gold or None, meta)]; annotations:
    [(item, annotator, value, round, current, batch, dwell)]; predictions: [(run, item, answer, rating)]."""
    ann_cols = ["campaign_id", "batch_id", "item_id", "annotator_id", "round", "current", "value", "excluded",
                "dwell_seconds"]
    ann = {c: [] for c in ann_cols}
    for item, annotator, value, rnd, current, batch, dwell in annotations:
        for c, v in zip(ann_cols, (1, batch, item, annotator, rnd, current, value, False, dwell), strict=True):
            ann[c].append(v)
    ann["answers"] = {}
    for _, _, form in tasks:
        ann["answers"][form["primary"]] = ann["value"]
    pred_cols = ["run_id", "item_id", "variant", "answer", "answer_norm", "answer_per_token", "acc_pick",
                 "parse_status", "gold", "rating"]
    pred = {c: [] for c in pred_cols}
    for run, item, answer, rating in predictions:
        for c, v in zip(pred_cols, (run, item, "", answer, "", "", None, "scored", "", rating), strict=True):
            pred[c].append(v)
    return ReportData(
        benchmark={"slug": "b", "name": "B", "version": "", "language": "en", "source": "", "licence": ""},
        campaign_id=None, gold_version=None,
        tasks=[{"id": t, "slug": slug, "name": slug, "dimension": "", "form": form} for t, slug, form in tasks],
        items={"id": [i[0] for i in items], "task_id": [i[1] for i in items],
               "external_id": [f"x{i[0]}" for i in items],
               "content_hash": ["h"] * len(items), "domain": [i[3].get("domain") for i in items],
               "n_options": [i[3].get("n_options", 0) for i in items], "model_a": [i[3].get("model_a") for i in items],
               "model_b": [i[3].get("model_b") for i in items],
               "source_gold": [None if i[2] is None else {f: i[2] for f in ("answer", "verdict", "score")}
                               for i in items]},
        gold=gold,
        campaigns=[{"id": 1, "name": "c", "protocol": "production", "source": "",
                    "settings": [{"version": 1, "overlap": 2, "guidelines": "g", "note": "",
                                  "min_reading_seconds": 0}]}],
        batches=batches or [{"id": 1, "campaign_id": 1, "number": 1, "state": "accepted", "round": 1,
                             "settings__version": 1}],
        annotations=ann, qc=list(qc), users={10: "ann", 11: "bob", 12: "cid"},
        runs=[{"id": r, "mode": mode, "settings": settings, "prompt_version": "p", "prompt_sha256": "s",
               "position_policy": "as_is", "seed": 0, "finished_at": None, "model__name": name, "model__source": "",
               "model__sha256": "", "model__revision": "", "model__dtype": "float32", "task_ids": task_ids}
              for r, name, mode, settings, task_ids in runs],
        predictions=pred, code={"commit": None})


def test_undefined_figures_are_null_with_a_reason_never_nan():
    # Every rater gives the same label: kappa is undefined; no human answers on task 2.
    d = data([(1, "t1", MC_FORM), (2, "t2", MC_FORM)],
             [(n, 1 if n < 4 else 2, "A", {"n_options": 2}) for n in range(6)],
             [(n, a, "A", 1, True, 1, 5.0) for n in range(4) for a in (10, 11)],
             [(7, n, "A", None) for n in range(6)], [(7, "m", "generate", {}, [1, 2])])
    report = build_report(d, ReportOptions(n_resamples=50))
    text = render(report, "json")
    assert "NaN" not in text and "Infinity" not in text
    row = public(report)["agreement"]["campaigns"][0]
    assert row["fleiss_kappa"] is None and "same" in row["undefined"]["fleiss_kappa"]
    t2 = next(t for t in report["multiple_choice"]["tasks"] if t["task"] == "t2")
    assert t2["human_majority"] is None and t2["undefined"]["human_majority"] == "no human answers on this task's items"
    m2 = next(m for m in report["multiple_choice"]["models"] if m["task"] == "t2")
    assert m2["accuracy"] == 1.0 and m2["gap"] is None and m2["undefined"]["gap"]
    overall = report["multiple_choice"]["overall"]
    assert overall["human_majority"] is None and "undefined on some task" in overall["undefined"]["human_majority"]
    json.loads(text)


def test_annotators_against_gold_qc_and_peers():
    # Two annotators on 4 items, round 1 rejected by QC (item 0 wrong for "ann"), round 2 current.
    labels = {10: ["A", "B", "A", "A"], 11: ["A", "B", "B", "A"]}
    annotations = [(n, a, labels[a][n], 1, False, 1, 10.0 + n) for a in labels for n in range(4)]
    annotations += [(n, a, "A", 2, True, 1, 20.0 + n) for a in labels for n in range(4)]
    qc = [(1, 1, "rejected", 1, "A"), (1, 1, "rejected", 2, "A"), (1, 2, "accepted", 0, "A")]
    d = data([(1, "t", MC_FORM)], [(n, 1, "A", {"n_options": 2}) for n in range(4)], annotations, qc=qc,
             batches=[{"id": 1, "campaign_id": 1, "number": 1, "state": "accepted", "round": 2,
                       "settings__version": 1}])
    rows = {r["annotator"]: r for r in build_report(d, ReportOptions(n_resamples=10))["annotators"]}
    ann, bob = rows["ann"], rows["bob"]
    assert ann["n_annotations"] == 4 and ann["accuracy_vs_gold"] == 1.0
    # QC checked items 1 and 2 in round 1 and item 0 in round 2: ann missed item 1, bob items 1 and 2.
    assert ann["accuracy_vs_qc"] == pytest.approx(2 / 3) and ann["n_qc"] == 3
    assert bob["accuracy_vs_qc"] == pytest.approx(1 / 3)
    assert ann["rounds_caused"] == 1 and bob["rounds_caused"] == 1 and ann["rejected_rounds"] == 1
    assert ann["peer_agreement"] == 1.0 and ann["n_peer_pairs"] == 4
    assert ann["peer_kappa"] is None and ann["undefined"]["peer_kappa"]  # one category: kappa undefined
    assert ann["median_reading_seconds"] == pytest.approx(21.5)


def test_pairwise_outcomes_elo_bradley_terry_and_judge_agreement():
    systems = [("x", "y"), ("x", "z"), ("y", "z")] * 4
    items = [(n, 1, None, {"model_a": a, "model_b": b}) for n, (a, b) in enumerate(systems)]
    # Humans: conversation 1 (A) looks like an AI on even items -> A loses; "both" on every fifth.
    human = ["both" if n % 5 == 0 else ("1" if n % 2 == 0 else "2") for n in range(len(items))]
    annotations = [(n, a, human[n], 1, True, 1, None) for n in range(len(items)) for a in (10, 11)]
    judge = ["1" if n % 3 else "2" for n in range(len(items))]
    d = data([(1, "arena", PAIR_FORM)], items, annotations, [(5, n, judge[n], None) for n in range(len(items))],
             [(5, "judge", "pairwise", {}, [1])])
    report = build_report(d, ReportOptions(n_resamples=30))
    task = report["pairwise"]["tasks"][0]
    outcome = {"1": "lose", "2": "win", "both": "tie", "neither": "tie"}
    human_matches = [(a, b, outcome[h]) for (a, b), h in zip(systems, human, strict=True)]
    humans = task["judges"]["humans"]
    assert humans["elo"]["ratings"] == pytest.approx(elo(human_matches).ratings)
    scores = {i["model"]: i["score"] for i in humans["bradley_terry"]["intervals"]}
    assert scores == pytest.approx(bradley_terry(human_matches).scores)
    verdicts = task["judges"]["judge"]
    judged, labelled = [outcome[j] for j in judge], [outcome[h] for h in human]
    agreement = np.mean([a == b for a, b in zip(judged, labelled, strict=True)])
    assert verdicts["agreement_with_humans"] == pytest.approx(agreement)
    assert verdicts["kappa_with_humans"] == pytest.approx(cohen_kappa(judged, labelled).value)
    assert sum(p["n"] for p in humans["win_tie_lose"]) == len(items)


def test_ratings_against_gold_in_diqad_columns():
    gold = [2, 1, 0, 2, 1, 0, 2, 2, 1, 0]
    answers = ["2", "1", "1", "2", "0", "0", "2", "1", "1", "0"]
    ratings = [1.9, 1.2, 0.8, 1.7, 0.4, 0.1, 1.6, 1.1, 0.9, 0.3]
    items = [(n, 1, g, {}) for n, g in enumerate(gold)]
    annotations = [(n, a, g, 1, True, 1, None) for n, g in enumerate(gold) for a in (10, 11)]
    d = data([(1, "quality", SCORE_FORM)], items, annotations,
             [(3, n, a, r) for n, (a, r) in enumerate(zip(answers, ratings, strict=True))],
             [(3, "rater", "rating", {"quality": "score"}, [1])])
    report = build_report(d, ReportOptions(n_resamples=10))
    row = report["ratings"]["models"][0]
    expected = classification_metrics(gold, [int(a) for a in answers], labels=[2, 1, 0])
    assert row["gold_accuracy"] == expected.accuracy and row["gold_uar"] == pytest.approx(expected.uar)
    assert row["gold_f1"] == pytest.approx(expected.macro_f1)
    assert row["gold_kappa"] == pytest.approx(cohen_kappa(gold, [int(a) for a in answers], labels=[2, 1, 0]).value)
    table = diqad_tables(public(report))[0]
    assert table.header == ["Model", *[name for name, _ in DIQAD_COLUMNS], "Items"]
    assert [c.text() for c in table.rows[0][1:3]] == [f"{100 * expected.accuracy:.2f}", f"{100 * expected.uar:.2f}"]
    assert r"Acc & UAR & Kappa & Spearman & Pearson & P & R & F1" in render(report, "latex")


def test_peer_kappa_is_the_mean_of_cohens_kappa_with_each_peer():
    labels = {10: list("AABBABAB"), 11: list("AABBBBAA"), 12: list("ABBBABAA")}
    annotations = [(n, a, v, 1, True, 1, 5.0) for a, vs in labels.items() for n, v in enumerate(vs)]
    d = data([(1, "t", MC_FORM)], [(n, 1, "A", {"n_options": 2}) for n in range(8)], annotations)
    rows = {r["annotator_id"]: r for r in build_report(d, ReportOptions(n_resamples=10))["annotators"]}
    for me, mine in labels.items():
        peers = [cohen_kappa(mine, theirs).value for other, theirs in labels.items() if other != me]
        shares = [np.mean([a == b for a, b in zip(mine, theirs, strict=True)])
                  for other, theirs in labels.items() if other != me]
        assert rows[me]["peer_kappa"] == pytest.approx(np.mean(peers))
        assert rows[me]["peer_agreement"] == pytest.approx(np.mean(shares)) and rows[me]["n_peer_pairs"] == 16


def test_diqad_cross_domain_table_against_gold():
    """DiQAD's Table 4: per domain, each model's Acc, UAR, Spearman, Pearson and F1 on that domain's gold items,
    a classifier trained without the domain under it ("w/o"); figures from sklearn's and SciPy's own. The
    correlations are of the predicted classes with gold, as DiQAD correlates "model predictions", not of the
    probability-weighted rating."""
    from scipy import stats

    gold = [2, 1, 0, 2, 1, 0, 2, 2]
    answers = ["2", "1", "1", "2", "0", "0", "1", "2"]
    ratings = [1.8, 1.1, 0.7, 1.9, 0.2, 0.4, 1.2, 1.6]
    domains = ["health", "health", "health", "law", "law", "law", "law", None]
    held_out = ["1", "1", "0", "2"]  # the classifier trained without law, on law's items
    items = [(n, 1, g, {"domain": d}) for n, (g, d) in enumerate(zip(gold, domains, strict=True))]
    annotations = [(n, a, g, 1, True, 1, None) for n, g in enumerate(gold) for a in (10, 11)]
    d = data([(1, "quality", SCORE_FORM)], items, annotations,
             [*[(3, n, a, r) for n, (a, r) in enumerate(zip(answers, ratings, strict=True))],
              *[(4, n, a, float(a)) for n, a in zip(range(3, 7), held_out, strict=False)]],
             [(3, "ernie", "classify", {"question": "score"}, [1]),
              (4, "ernie-law", "classify", {"question": "score"}, [1])])
    d.runs[1]["model__trained_by__settings"] = {"holdout_domain": "law"}
    report = build_report(d, ReportOptions(n_resamples=10, min_items=3))
    by_domain = {d["domain"]: d for d in report["ratings"]["models"][0]["gold_by_domain"]}
    assert {k: (v["n"], v["accuracy"]) for k, v in by_domain.items()} == {
        "": (1, 1.0), "health": (3, 2 / 3), "law": (4, 2 / 4)}
    assert by_domain[""].get("small_sample") and not by_domain["law"].get("small_sample")
    table = diqad_tables(public(report))[1]
    assert table.header == ["Domain", "Model", "Acc", "UAR", "Spearman", "Pearson", "F1", "Items"]
    assert [[c.text() for c in row[:3]] + [row[-1].text()] for row in table.rows] == [
        ["health", "ernie", "66.67", "3"], ["law", "ernie", "50.00", "4"], ["law", "w/o law: ernie-law", "75.00", "4"]]
    truth = gold[3:7]
    for row, picked in ((table.rows[1], [int(a) for a in answers[3:7]]), (table.rows[2], [int(a) for a in held_out])):
        expected = classification_metrics(truth, picked, labels=[2, 1, 0])
        assert row[3].text() == f"{100 * expected.uar:.2f}" and row[6].text() == f"{100 * expected.macro_f1:.2f}"
        assert row[4].text() == f"{100 * stats.spearmanr(picked, truth).statistic:.2f}"
        assert row[5].text() == f"{100 * stats.pearsonr(picked, truth).statistic:.2f}"


def test_cross_domain_table_says_it_cannot_be_produced_without_domains():
    gold = [2, 1, 0, 2]
    d = data([(1, "quality", SCORE_FORM)], [(n, 1, g, {}) for n, g in enumerate(gold)],
             [(n, a, g, 1, True, 1, None) for n, g in enumerate(gold) for a in (10, 11)],
             [(3, n, str(g), float(g)) for n, g in enumerate(gold)], [(3, "m", "rating", {"quality": "score"}, [1])])
    table = diqad_tables(public(build_report(d, ReportOptions(n_resamples=10))))[1]
    assert table.rows == [] and "none of these items carries one (meta.domain)" in table.note


def test_botchat_table_counts_each_order_once_and_judges_are_compared_with_each_other():
    """BotChat's analyze.py counts every (shown first, shown second) comparison; a pair and its twin in the
    other order ask the same two questions, so they count once each. Two judge runs are compared item by item."""
    from dataclasses import replace

    from metrics import botchat_outcomes, elo_over_orders
    from reports.sections.pairwise import ELO_ORDERS

    items = [(0, 1, None, {"model_a": "x", "model_b": "y"}), (1, 1, None, {"model_a": "y", "model_b": "x"}),
             (2, 1, None, {"model_a": "x", "model_b": "z"})]
    # judge-1's combined verdicts (one per pair) differ from what its two orders said, so which one the arena
    # tables read shows: with the botchat preset, each order's judgement.
    first_judge, second_judge = ["1", "1", "both"], ["2", "2", "both"]
    d = data([(1, "arena", PAIR_FORM)], items, [],
             [(5, n, first_judge[n], None) for n in range(3)] + [(6, n, second_judge[n], None) for n in range(3)],
             [(5, "judge-1", "pairwise", {"preset": "botchat"}, [1]), (6, "judge-2", "pairwise", {}, [1])])
    steps = {"run_id": [5, 5, 5], "item_id": [0, 1, 2], "source_a": ["100", "200", "101"],
             "source_b": ["200", "100", "300"],
             # item 0: x shown first and conversation 2 judged AI (x wins); y shown first and judged AI (y loses).
             # item 1 is item 0's twin: the same two questions, the same answers. item 2: both judged AI, then unread.
             "label_1": ["2", "1", "both"], "a_position_1": ["1", "1", "1"],
             "label_2": ["1", "2", None], "a_position_2": ["2", "2", "2"]}
    report = build_report(replace(d, pairwise_steps=steps), ReportOptions(n_resamples=10))
    task = report["pairwise"]["tasks"][0]
    table = task["botchat"]["judge-1"]
    assert table["n_comparisons"] == 4
    expected = botchat_outcomes([("x", "y", "win"), ("y", "x", "lose"), ("x", "z", "neither"), ("z", "x", "unknown")])
    assert table["systems"] == [r.to_dict() for r in expected]
    x = {r["model"]: r for r in table["systems"]}["x"]
    assert (x["n"], x["win"], x["neither"], x["unknown"]) == (4, 2, 1, 1)  # in all four comparisons
    assert "judge-2" not in task["botchat"]  # no steps stored for it
    [pair] = task["judge_agreement"]
    outcome = {"1": "lose", "2": "win", "both": "tie"}
    one, two = [outcome[v] for v in first_judge], [outcome[v] for v in second_judge]
    assert (pair["judge_a"], pair["judge_b"], pair["n_compared"]) == ("judge-1", "judge-2", 3)
    assert pair["agreement"] == pytest.approx(1 / 3)
    assert pair["kappa"] == pytest.approx(cohen_kappa(one, two).value)
    # Elo in the stated order (item ids) and the mean over seeded shuffles beside it. judge-1 (the botchat preset)
    # plays each order's judgement as a match, its unread answer none; judge-2 its one verdict per pair.
    entry = task["judges"]["judge-1"]
    matches = [("x", "y", "win"), ("y", "x", "lose"), ("x", "z", "tie")]
    assert entry["matches_from"].startswith("each order of showing") and entry["n_matches"] == 3
    assert entry["elo"]["ratings"] == pytest.approx(elo(matches).ratings)
    combined = task["judges"]["judge-2"]
    assert combined["matches_from"].startswith("one verdict per pair")
    assert combined["elo"]["ratings"] == pytest.approx(elo([("x", "y", "win"), ("y", "x", "win"),
                                                            ("x", "z", "tie")]).ratings)
    assert "order of the items' ids" in entry["elo"]["order"]
    assert entry["elo_over_orders"]["mean"] == pytest.approx(elo_over_orders(matches, ELO_ORDERS, seed=0).mean)
    html = render(report, "html")
    assert "BotChat arena: arena" in html and "Judge against judge" in html and "NotBad" in html
    assert "pairwise.botchat" in render(report, "csv")


def test_provenance_digests_the_guidelines_of_every_language():
    """What people read is in the provenance: the default guidelines' digest and, per language given, that text's."""
    import hashlib

    d = data([(1, "t1", MC_FORM)], [(1, 1, "A", {"n_options": 2})], [(1, 10, "A", 1, True, 1, 5.0)])
    d.campaigns[0]["settings"][0]["guidelines_by_language"] = {"ko": "지침", "zh-hans": "指南"}
    entry = build_report(d, ReportOptions(n_resamples=10))["provenance"]["guidelines"][0]
    assert entry["sha256"] == hashlib.sha256(b"g").hexdigest()
    assert entry["sha256_by_language"] == {"ko": hashlib.sha256("지침".encode()).hexdigest(),
                                           "zh-hans": hashlib.sha256("指南".encode()).hexdigest()}
    del d.campaigns[0]["settings"][0]["guidelines_by_language"]  # rows from before the field: none
    assert build_report(d, ReportOptions(n_resamples=10))["provenance"]["guidelines"][0]["sha256_by_language"] == {}
