"""A report that cannot mislead: circular gold refused, small samples flagged, every rule named,
positions kept out of per-person tables, and the gold each report cites chosen by whoever owns it."""
import csv
import io
import json

import pytest
from rest_framework.test import APIClient
from statsmodels.stats.contingency_tables import mcnemar

from annotation import actions
from annotation.models import BatchItem
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from metrics import paired_bootstrap_gap
from reports.build import build_report, public
from reports.contract import ReportOptions
from reports.render import render
from tests.conftest import DEMO_DATA
from tests.reports import factories
from tests.reports.test_build import MC_FORM, SCORE_FORM, data

# Human majority right / model right on 8 items, two per task: 4 only the humans, 1 only the model, 3 both.
PAIRS = [(1, 0), (1, 0), (1, 0), (1, 0), (0, 1), (1, 1), (1, 1), (1, 1)]


def eight_items():
    tasks = [(t, f"t{t}", MC_FORM) for t in range(1, 5)]
    items = [(n, 1 + n // 2, "A", {"n_options": 2}) for n in range(8)]
    votes = {1: ["A", "A", "B"], 0: ["B", "B", "A"]}
    annotations = [(n, 10 + r, votes[human][r], 1, True, 1, 5.0)
                   for n, (human, _) in enumerate(PAIRS) for r in range(3)]
    predictions = [(7, n, "A" if model else "B", None) for n, (_, model) in enumerate(PAIRS)]
    d = data(tasks, items, annotations, predictions, [(7, "m", "loglikelihood", {"rule": "per_token"}, [1, 2, 3, 4])])
    d.predictions["acc_pick"] = ["A"] * 8  # lm-eval's acc picks the gold everywhere
    d.campaigns[0]["settings"][0]["overlap"] = 3
    return d


def test_eight_items_get_an_item_level_interval_a_pooled_mcnemar_and_small_sample_flags():
    options = ReportOptions(n_resamples=500, seed=4)
    report = build_report(eight_items(), options)
    overall = report["multiple_choice"]["overall"]["models"][0]
    human = [bool(h) for h, _ in PAIRS]
    model = [bool(m) for _, m in PAIRS]
    expected = mcnemar([[3, 4], [1, 0]], exact=True).pvalue
    assert expected == pytest.approx(0.375)
    assert overall["pooled_mcnemar_p"] == pytest.approx(expected)
    assert (overall["pooled_human_only"], overall["pooled_model_only"]) == (4, 1)
    pooled = paired_bootstrap_gap(human, model, n_resamples=500, seed=4)
    assert (overall["pooled_gap"], overall["pooled_gap_low"], overall["pooled_gap_high"]) == (
        pooled.gap, pooled.low, pooled.high)
    assert "item-level" in overall["pooled_gap_interval"] and "within-task" in overall["gap_interval"]
    # Two items per task: the within-task interval is far narrower than the item-level one.
    assert overall["gap_high"] - overall["gap_low"] < pooled.high - pooled.low
    per_task = report["multiple_choice"]["models"]
    assert len(per_task) == 4 and all(m["mcnemar_p"] is not None for m in per_task)
    # Every figure from 8 items is flagged, in every format; agreement on 8 items gets no band.
    for row in [*report["multiple_choice"]["tasks"], *per_task, overall, report["multiple_choice"]["overall"]]:
        assert row["small_sample"].startswith("small sample: ")
    agreement = public(report)["agreement"]["campaigns"][0]
    assert agreement["fleiss_kappa"] is not None and "2 items < 30" in agreement["small_sample"]
    assert agreement["band"] is None and "no Landis-Koch band" in agreement["undefined"]["band"]
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    gap = next(r for r in rows if r["section"] == "multiple_choice.overall" and r["metric"] == "pooled_mcnemar_p")
    assert gap["flag"].startswith("small sample") and gap["rule"] == "per_token"
    kappa = next(r for r in rows if r["section"] == "agreement.campaigns" and r["metric"] == "fleiss_kappa")
    assert kappa["flag"].startswith("small sample")
    html = render(report, "html")
    assert html.count('<span class="flag">small sample</span>') > 10
    latex = render(report, "latex")
    assert r"\textsuperscript{\dag}" in latex and r"\dag{} small sample: " in latex and "8 items < 30" in latex
    # The how-to-read section says what the intervals and tests are, and what is flagged.
    topics = {part["topic"]: part["text"] for part in report["how_to_read"]}
    assert {"gold", "humans", "rules", "intervals", "tests", "flags"} <= set(topics)
    assert "item-level" in topics["intervals"] and "pooled" in topics["tests"] and "fewer than 30" in topics["flags"]
    assert "How to read this report" in html and "How to read this report" in latex


def test_every_model_figure_names_its_rule_and_the_researcher_chooses_it():
    by_run = build_report(eight_items(), ReportOptions(n_resamples=50))
    assert {m["rule"] for m in by_run["multiple_choice"]["models"]} == {"per_token"}
    assert by_run["multiple_choice"]["overall"]["models"][0]["accuracy"] == 0.5
    report = build_report(eight_items(), ReportOptions(n_resamples=50, rule="acc"))
    models = report["multiple_choice"]["models"]
    assert {m["rule"] for m in models} == {"acc"} and all(m["accuracy"] == 1.0 for m in models)
    assert report["multiple_choice"]["overall"]["models"][0]["rule"] == "acc"
    assert all(p["model_rules"] == {"m": "acc"} for p in report["multiple_choice"]["positions"]
               if p["source"] == "gold_position")
    assert json.loads(render(report, "json"))["multiple_choice"]["models"][0]["rule"] == "acc"
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    model_rows = [r for r in rows if r["section"].startswith("multiple_choice") and r["model"] == "m"]
    assert model_rows and {r["rule"] for r in model_rows} == {"acc"}
    assert "m [acc]" in render(report, "html")
    latex = render(report, "latex")
    assert r"\caption{Accuracy per task (\%); models scored by acc}" in latex and "m [acc]" in latex
    with pytest.raises(ValueError, match="rule"):
        ReportOptions(rule="accuracy")


def test_raters_that_are_positions_are_marked_and_left_out_of_per_person_tables():
    items = [(n, 1, 1, {}) for n in range(6)]
    annotations = [(n, 10 + r, (n + r) % 3, 1, True, 1, None) for n in range(6) for r in range(3)]
    d = data([(1, "turn", SCORE_FORM)], items, annotations)
    d.campaigns[0].update(source="import:fed", protocol="human_baseline", raters_are_positions=True)
    report = build_report(d, ReportOptions(n_resamples=20))
    assert report["campaigns"][0]["raters_are_positions"] is True
    assert report["raters"]["positions"][0]["campaign_id"] == 1
    assert report["annotators"] == []
    quality = report["ratings"]["qualities"][0]
    assert quality["human_raters"] == [] and quality["n_rating_positions"] == 3
    assert "positions, not people" in quality["ceiling_rule"]
    assert quality["human_ceiling_spearman"] is not None  # the ceiling stays, computed over positions
    assert "positions in an imported file" in {p["topic"]: p["text"] for p in report["how_to_read"]}["humans"]
    html = render(report, "html")
    assert "3 positions" in html and "fed-rater" not in html


# ---------------------------------------------------------------- gold through the API

def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def baseline(db):
    """DialogBench demo items, a human baseline whose 3 raters tie on 2 items and split 2-1 elsewhere."""
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db")
    bench = Benchmark.objects.get(slug="db")
    items = list(Item.objects.filter(task__benchmark=bench).order_by("id"))
    answers = {}
    for n, item in enumerate(items):
        gold = item.source_gold["answer"]
        other = next(k for k in item.fields["options"] if k != gold)
        third = next((k for k in item.fields["options"] if k not in (gold, other)), None)
        if n < 2 and third:
            answers[item.pk] = [gold, other, third]  # a tie
        else:
            answers[item.pk] = [other, other, gold] if n % 2 else [gold, gold, other]
    campaign = factories.human_campaign(bench, answers)
    tied = []
    for bi in BatchItem.objects.filter(campaign=campaign):
        votes = answers[bi.item_id]
        top = max(set(votes), key=votes.count)
        if votes.count(top) == 1:
            tied.append(bi.item_id)
        else:
            bi.final_value, bi.final_method = top, "majority"
            bi.save(update_fields=["final_value", "final_method"])
    manager = factories.users("manager-", 1)[0]
    actions.add_member(campaign, actor=factories.staff(), user=manager, role="manager")
    return {"benchmark": bench, "campaign": campaign, "manager": manager, "tied": tied, "items": items}


def test_circular_gold_is_refused_and_ties_are_listed(baseline):
    campaign, manager = baseline["campaign"], baseline["manager"]
    client = api(manager)
    created = client.post(f"/api/v1/campaigns/{campaign.pk}/gold_versions/", {}, format="json")
    assert created.status_code == 201, created.content
    version = created.json()
    assert sorted(version["left_out"]["tie"]) == sorted(baseline["tied"]) and len(baseline["tied"]) == 2
    assert client.post(f"/api/v1/gold-versions/{version['id']}/freeze/").status_code == 200
    citation = version["citation"]

    staff = api(factories.staff())
    scoped = {"benchmark": "db", "campaign": campaign.pk}
    report = staff.get("/api/v1/reports/", scoped).json()
    assert report["scope"]["gold"] == "source"  # freezing a campaign's gold changes no report by itself
    source_majority = report["multiple_choice"]["overall"]["human_majority"]
    assert source_majority < 1.0
    # Asking for the circular gold in the campaign's report is refused with the reason.
    refused = staff.get("/api/v1/reports/", {**scoped, "gold_version": version["number"]})
    assert refused.status_code == 400 and "circular" in refused.json()["detail"]
    # Pinning it is refused too.
    pinned = client.post(f"/api/v1/campaigns/{campaign.pk}/pinned_gold/", {"gold_version": version["number"]},
                         format="json")
    assert pinned.status_code == 400 and "circular" in pinned.json()["detail"]
    # Chosen as the benchmark's gold (staff), the benchmark report leaves the campaign out of the humans, names
    # why, and lists the tied items the gold has no label for.
    chosen = staff.post(f"/api/v1/gold-versions/{version['id']}/benchmark_gold/", {"reason": "panel not run yet"},
                        format="json")
    assert chosen.status_code == 200, chosen.content
    whole = staff.get("/api/v1/reports/", {"benchmark": "db"}).json()
    assert whole["gold"]["citation"] == citation and whole["gold"]["chosen_by"] == "benchmark"
    assert campaign.pk not in whole["scope"]["human_campaigns"]
    assert whole["gold"]["excluded_campaigns"][0]["campaign_id"] == campaign.pk
    assert whole["gold"]["derived_from_campaign"] == campaign.pk
    left = whole["gold"]["left_out"][0]
    external = {i.pk: i.external_id for i in baseline["items"]}
    assert left["reason"] == "tie" and left["count"] == 2
    assert sorted(left["items"]) == sorted(external[i] for i in baseline["tied"])
    assert "2 item(s) have no label in it" in {p["topic"]: p["text"] for p in whole["how_to_read"]}["gold"]
    # The campaign's own report still scores its humans against the source gold.
    again = staff.get("/api/v1/reports/", scoped).json()
    assert again["scope"]["gold"] == "source"
    assert again["multiple_choice"]["overall"]["human_majority"] == source_majority
    html = staff.get("/api/v1/reports/", {"benchmark": "db", "format": "html"}).content.decode()
    assert "Why this gold" in html and "panel not run yet" in html
