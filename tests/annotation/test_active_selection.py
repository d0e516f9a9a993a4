"""Active selection: the items cut into batches are drawn by the judge's uncertainty mixed with uniform, each
drawn item's inclusion probability is kept on its batch item and its leases, and the report weights by it."""
import json

import numpy as np
import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from annotation import actions
from annotation.models import Assignment, BatchItem, Event
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from core.errors import ActionError, Code
from metrics.prediction_powered import inclusion_probabilities, poisson_draw
from modeleval.selectors import item_uncertainty
from reports.selectors import inclusion_rows, resolve_scope
from tests.frontend.conftest import diqad_item
from tests.reports.factories import model_run

from .conftest import make_campaign, submit_score


@pytest.fixture
def sixty(db, tmp_path):
    path = tmp_path / "sixty.jsonl"
    path.write_text("".join(json.dumps(diqad_item(n, label=2 if n % 2 else 0)) + "\n" for n in range(1, 61)))
    import_items(path, "diqad", "dq-sixty")
    return Benchmark.objects.get(slug="dq-sixty")


def judge(benchmark):
    """A rating run that is sure of the first items and unsure of the later ones."""
    items = Item.objects.filter(task__benchmark=benchmark).order_by("external_id")
    predictions = {}
    for n, item in enumerate(items):
        spread = n / len(items)
        top = {"2": 1 - spread, "1": spread / 2, "0": spread / 2}
        predictions[item.pk] = {"answer": "2", "rating": 2 - 1.5 * spread,
                                "probabilities": {"raw": top, "top": top}}
    return model_run(benchmark, list(benchmark.tasks.all()), "judge", predictions, mode="rating")


def active(staff, people, benchmark, run, **settings):
    values = {"overlap": 1, "batch_size": 10, "qc_sample_size": 5, "min_reading_seconds": 0, "seed": 3,
              "selection_mode": "active", "active_budget": 20, "active_uniform_share": "0.2",
              "active_judge_run": run.pk, **settings}
    return make_campaign(staff, people, benchmark.slug, **values)


def test_the_draw_follows_the_judges_uncertainty_and_keeps_each_probability(staff, people, sixty):
    run = judge(sixty)
    campaign = active(staff, people, sixty, run)
    batches = actions.cut_batches(campaign, actor=staff)
    ids = sorted(Item.objects.filter(task__benchmark=sixty).values_list("pk", flat=True))
    uncertainty = item_uncertainty(run.pk, ids)
    pi = inclusion_probabilities([uncertainty[i] for i in ids], 20, 0.2)
    drawn = {i: p for i, p, chosen in zip(ids, pi, poisson_draw(pi, f"{3}:active"), strict=True) if chosen}
    stored = dict(BatchItem.objects.filter(campaign=campaign).values_list("item_id", "inclusion_probability"))
    assert stored == pytest.approx(drawn) and 10 <= len(stored) <= 30
    assert sum(b.items.count() for b in batches) == len(stored)
    assert pi.sum() == pytest.approx(20) and pi[-1] > pi[0] > 0  # the unsure items are likelier, none impossible
    event = Event.objects.filter(campaign=campaign, kind="batch_created").first()
    left = {i: p for i, p in zip(ids, pi, strict=True) if i not in drawn}
    assert event.figures["active"] == {
        "judge_run": run.pk, "budget": 20, "uniform_share": 0.2, "drawn": len(stored), "candidates": 60,
        "left_out": 60 - len(stored),
        "probability_drawn": {"min": round(min(drawn.values()), 4), "max": round(max(drawn.values()), 4),
                              "median": round(float(np.median(list(drawn.values()))), 4)},
        "probability_left_out": {"min": round(min(left.values()), 4), "max": round(max(left.values()), 4),
                                 "median": round(float(np.median(list(left.values()))), 4)}}
    with pytest.raises(ActionError) as again:
        actions.cut_batches(campaign, actor=staff)
    assert again.value.code == Code.NOTHING_TO_CUT and "active selection" in again.value.detail
    assert inclusion_rows(resolve_scope(sixty.slug, campaign.pk)) == pytest.approx(drawn)


def test_leases_carry_the_probability_and_batches_run_as_usual(staff, people, sixty):
    run = judge(sixty)
    campaign = active(staff, people, sixty, run)
    actions.cut_batches(campaign, actor=staff)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    bi = BatchItem.objects.get(pk=lease.batch_item_id)
    assert Assignment.objects.get(pk=lease.pk).inclusion_probability == bi.inclusion_probability is not None
    submit_score(lease, people["ann1"], 2)
    bi.refresh_from_db()
    assert bi.status == "labelled" and bi.final_value == 2


def test_active_selection_needs_a_budget_and_a_judge(staff, people, sixty):
    with pytest.raises(ActionError) as refused:
        make_campaign(staff, people, sixty.slug, selection_mode="active")
    assert refused.value.code == Code.INVALID_SETTINGS
    assert set(refused.value.extra["errors"]) == {"active_budget", "active_judge_run"}
    generation = model_run(sixty, list(sixty.tasks.all()), "talker", {
        i.pk: {"answer": "2"} for i in Item.objects.filter(task__benchmark=sixty)}, mode="generate")
    # A run that tells nothing of how unsure it was (generation) is no judge: refused with the settings already.
    with pytest.raises(ActionError) as unread:
        active(staff, people, sixty, generation)
    assert unread.value.code == Code.INVALID_SETTINGS and set(unread.value.extra["errors"]) == {"active_judge_run"}
    assert not BatchItem.objects.exists()


def test_every_item_mode_is_unchanged(staff, people, sixty):
    campaign = make_campaign(staff, people, sixty.slug, overlap=1, batch_size=25, items_per_task=None)
    actions.cut_batches(campaign, actor=staff)
    assert BatchItem.objects.filter(campaign=campaign).count() == 60
    assert not BatchItem.objects.filter(campaign=campaign, inclusion_probability__isnull=False).exists()


def test_the_cut_says_what_it_drew_and_left_out_with_the_probabilities(staff, people, sixty, client):
    """The manager's cut names the items drawn and those left out, and the campaign page lists each drawn item's
    inclusion probability (before, the message said only how many batches and items were cut)."""
    run = judge(sixty)
    campaign = active(staff, people, sixty, run)
    client.force_login(staff)
    response = client.post(reverse("manage-cut", args=[campaign.pk]), follow=True)
    message = " ".join(str(m) for m in get_messages(response.wsgi_request)) or response.content.decode()
    drawn = dict(BatchItem.objects.filter(campaign=campaign).values_list("item__external_id", "inclusion_probability"))
    assert f"Active selection drew {len(drawn)} of 60 items and left {60 - len(drawn)} out" in message
    assert f"{min(drawn.values()):.3f} to {max(drawn.values()):.3f}" in message  # the drawn items' probabilities
    assert "of those left out:" in message and "20 expected" in message and "judge run" in message
    page = client.get(reverse("manage-campaign", args=[campaign.pk])).content.decode()
    assert 'id="active-draw-items"' in page
    for external_id, p in drawn.items():
        assert f'<th scope="row">{external_id}</th>' in page and f"{p:.4f}" in page
