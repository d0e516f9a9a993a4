"""Annotator models and the planner on the pages: competence beside gold accuracy on the QC and batch pages,
the most uncertain items first on the experts' page, the planner on the campaign page, the settings with their
meaning on the campaign form."""
import re

from annotation import actions
from annotation.models import Batch, Item
from annotation.presets import meaning
from benchmarks.models import Benchmark
from metrics import dawid_skene
from tests.annotation.conftest import submit_score
from tests.reports.factories import model_run

from .conftest import production

# The demo DiQAD items' published labels, by external id, and what the careless annotator says instead.
CARELESS = {"dq-001": 0, "dq-002": 2, "dq-004": 0}


def labelled_campaign(staff, people, diqad):
    """Two annotators label every item of the DiQAD demo: ann1 the published label, ann2 the same except on
    three items; the disagreements are decided by the expert."""
    campaign = production(staff, people, diqad, overlap=2, batch_size=8, disagreement_policy="majority",
                          tie_rule="first")
    gold = {item.external_id: item.source_gold["score"] for item in Item.objects.filter(task__benchmark__slug=diqad)}
    for _ in range(len(gold)):
        for name in ("ann1", "ann2"):
            lease = actions.lease_next_item(campaign, annotator=people[name]).assignment
            truth = gold[lease.item.external_id]
            submit_score(lease, people[name], truth if name == "ann1" else CARELESS.get(lease.item.external_id, truth))
    return campaign, gold


def signed_in(client, user):
    client.force_login(user)
    return client


def expected_competence(campaign, gold):
    """Dawid-Skene on the same labels, computed here from the rows."""
    answers = [(a.item_id, a.annotator.username, a.value) for a in campaign.annotations.select_related("annotator")]
    held = {bi.item_id: bi.final_value for bi in campaign.batches.get().items.filter(final_method="adjudicated")}
    return dawid_skene(answers, gold=held).competence


def test_batch_view_shows_competence_beside_gold_accuracy(client, staff, people, diqad):
    campaign, gold = labelled_campaign(staff, people, diqad)
    page = signed_in(client, people["manager"]).get(f"/manage/campaigns/{campaign.pk}/").content.decode()
    assert 'id="annotator-estimates"' in page and "Dawid-Skene" in page
    competence = expected_competence(campaign, gold)
    for name, wrong in (("ann1", 0), ("ann2", len(CARELESS))):
        row = re.search(rf'<tr data-annotator="{name}">(.*?)</tr>', page, re.S).group(1)
        assert f'<td class="competence">{competence[name]:.3f}</td>' in row
        assert f'<td class="gold-accuracy">{(len(gold) - wrong) / len(gold):.3f}</td>' in row
    assert competence["ann1"] > competence["ann2"]


def test_qc_page_shows_the_batch_annotators_estimates_to_the_qc_only(client, staff, people, diqad):
    campaign, _ = labelled_campaign(staff, people, diqad)
    batch = Batch.objects.get(campaign=campaign)
    actions.hand_in_batch(batch, actor=staff)
    page = signed_in(client, people["qc"]).get(f"/batches/{batch.pk}/review/").content.decode()
    assert 'id="annotator-estimates"' in page and 'data-annotator="ann1"' in page and 'data-annotator="ann2"' in page
    assert signed_in(client, people["ann1"]).get(f"/batches/{batch.pk}/review/").status_code == 403


def test_experts_page_lists_the_most_uncertain_items_first(client, staff, people, diqad):
    campaign, _ = labelled_campaign(staff, people, diqad)
    client = signed_in(client, people["expert"])
    plain = client.get(f"/campaigns/{campaign.pk}/disagreements/").content.decode()
    assert 'id="uncertain-first"' in plain and 'id="uncertain-card"' not in plain
    page = client.get(f"/campaigns/{campaign.pk}/disagreements/?order=uncertain").content.decode()
    listed = re.findall(r'<tr data-item="([^"]+)"><th scope="row">[^<]+</th><td>([0-9.]+)</td>', page)
    uncertainty = [float(u) for _, u in listed]
    assert listed and uncertainty == sorted(uncertainty, reverse=True)
    assert {item for item, _ in listed} == {i.external_id for i in Item.objects.filter(task__benchmark__slug=diqad)}


def test_majority_vote_stands_beside_a_model_that_differs_from_it(client, staff, people, diqad):
    """The expert's decisions hold three tied items: the model's labels differ from majority vote (no label on a
    tie) on more than a few percent of the items, so majority vote is shown beside each."""
    campaign, gold = labelled_campaign(staff, people, diqad)
    page = signed_in(client, people["expert"]).get(
        f"/campaigns/{campaign.pk}/disagreements/?order=uncertain").content.decode()
    share = len(CARELESS) / len(gold)
    assert f"differs from majority vote on a share of {share:.2f} of the items" in page
    cells = dict(re.findall(r'<tr data-item="([^"]+)">.*?<td class="majority">(.*?)</td>', page))
    assert set(cells) == set(gold)
    for item, label in gold.items():
        assert ("tie" in cells[item]) if item in CARELESS else cells[item] == str(label)


def test_the_planner_says_how_many_more_labels_reach_the_width(client, staff, people, diqad):
    campaign, gold = labelled_campaign(staff, people, diqad)
    benchmark = Benchmark.objects.get(slug=diqad)
    items = Item.objects.filter(task__benchmark=benchmark)
    run = model_run(benchmark, list(benchmark.tasks.all()), "judge", {
        i.pk: {"answer": str(gold[i.external_id]), "rating": float(gold[i.external_id]) + 0.1} for i in items},
        mode="rating")
    client = signed_in(client, people["manager"])
    wide = client.get(f"/manage/campaigns/{campaign.pk}/", {"judge": run.pk, "width": "1.0", "confidence": "0.95"})
    body = wide.content.decode()
    assert 'id="plan"' in body and "Human-anchored now" in body and "8 of 8" in body
    assert 'id="plan-answer"><strong>The interval is already 1.0 wide or narrower' in body
    # every item is labelled already: no more labels can narrow it to 0.5
    narrow = client.get(f"/manage/campaigns/{campaign.pk}/", {"judge": run.pk, "width": "0.5", "confidence": "0.95"})
    assert "No number of labels up to all 8 items reaches a width of 0.5" in narrow.content.decode()
    form = client.get(f"/manage/campaigns/{campaign.pk}/").content.decode()
    assert 'id="planner-form"' in form and f'value="{run.pk}"' in form
    assert f"{run.model.name} · {run.mode} · run {run.pk}</option>" in form  # the judge shown as a run to pick


def test_the_campaign_form_offers_the_aggregate_rule_and_the_annotators_kind_with_their_meaning(client, staff,
                                                                                                 diqad):
    page = signed_in(client, staff).get("/manage/campaigns/new/", {"benchmark": diqad,
                                                                   "preset": "dialogbench-baseline"})
    body = page.content.decode()
    for name in ("aggregation", "annotator_kind"):
        assert f'data-setting="{name}"' in body and meaning(name)[:60] in body.replace("&#x27;", "'")
    # DialogBench's 2-of-3 is the study's rule: majority vote stays, its raters are experts
    assert re.search(r'<option value="majority" selected>', body)
    assert re.search(r'<option value="expert" selected>', body)


def test_the_planner_reads_the_report_s_own_figure_and_interval(client, staff, people, diqad):
    """The same labels and judge: the planner's interval now is the report's people's row (estimand, lambda,
    width), not a figure of its own from the final labels."""
    from reports.planner import campaign_plan
    from reports.service import make_report

    campaign, gold = labelled_campaign(staff, people, diqad)
    benchmark = Benchmark.objects.get(slug=diqad)
    items = Item.objects.filter(task__benchmark=benchmark)
    run = model_run(benchmark, list(benchmark.tasks.all()), "judge", {
        i.pk: {"answer": str(gold[i.external_id]), "rating": float(gold[i.external_id]) + 0.3 * (n % 3)}
        for n, i in enumerate(items.order_by("pk"))}, mode="rating")
    plan = campaign_plan(campaign, run, target_width=0.5)
    report = make_report(diqad, campaign.pk)
    row = next(r for r in report["human_anchored"]["humans"] if r["judge_run_id"] == run.pk)
    assert plan["estimand"].startswith(row["estimand"])
    assert plan["now"]["lam"] == row["lam"] and plan["now"]["human_anchored"]["width"] == row["anchored_width"]
    assert plan["plan"]["width_now"] == row["anchored_width"] and plan["now"]["method"] == row["method"]


def test_the_planner_refuses_a_pilot_in_which_judge_and_people_never_disagree(client, staff, people, diqad):
    campaign, gold = labelled_campaign(staff, people, diqad)
    benchmark = Benchmark.objects.get(slug=diqad)
    items = Item.objects.filter(task__benchmark=benchmark)
    means = {}
    for a in campaign.annotations.filter(superseded_at__isnull=True):
        means.setdefault(a.item_id, []).append(float(a.value))
    run = model_run(benchmark, list(benchmark.tasks.all()), "judge", {
        i.pk: {"answer": "0", "rating": sum(means[i.pk]) / len(means[i.pk])} for i in items}, mode="rating")
    page = signed_in(client, people["manager"]).get(f"/manage/campaigns/{campaign.pk}/", {
        "judge": run.pk, "width": "0.3", "confidence": "0.95"}).content.decode()
    assert 'class="notice">The judge and the people agree on all 8 labelled items so far' in page
    assert "id=\"plan-answer\"" not in page
