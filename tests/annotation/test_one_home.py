"""Figures shown in several places come from one function: the human baseline (API and report) and the
median reading time (dashboard, hand-in event, report)."""
import statistics
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation import actions
from annotation.models import Event
from benchmarks.models import Item

from .conftest import api, make_campaign, sid


def answer_of(position, item):
    """Raters 0 and 1 are always right, rater 2 on items with an odd id, rater 3 never: with k = 3 every item
    is right (2 of 3); with k = 4 only the odd ones reach 3 of 4."""
    gold = item.source_gold["answer"]
    wrong = next(option for option in item.fields["options"] if option != gold)
    return gold if position < 2 or position == 2 and item.pk % 2 else wrong


@pytest.mark.django_db
@pytest.mark.parametrize("k", [3, 4])
def test_api_and_report_give_one_human_baseline(staff, people, dialogbench, k):
    people["ann4"] = User.objects.create_user("ann4")
    raters = [f"ann{n}" for n in range(1, k + 1)]
    campaign = make_campaign(staff, people, dialogbench, protocol="human_baseline",
                             roles={"viewer": "viewer", **{r: "annotator" for r in raters}}, items_per_task=2,
                             seed=5, overlap=k)
    actions.cut_batches(campaign, actor=staff)
    for position, rater in enumerate(raters):
        client = api(people[rater])
        # Everyone stops after 7 of the 10 items: a baseline still in progress, 3 items nobody answered yet.
        for _ in range(7):
            lease = client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]
            item = Item.objects.get(pk=lease["item"]["id"])
            body = {"client_submission_id": sid(), "answers": {"answer": answer_of(position, item)}}
            assert client.post(f"/api/v1/assignments/{lease['id']}/submit/", body, format="json").status_code == 201

    from_api = {t["task"]: t for t in api(people["viewer"]).get(f"/api/v1/campaigns/{campaign.pk}/baseline/")
                .json()["tasks"]}
    report = api(staff).get(f"/api/v1/reports/?benchmark={dialogbench}&campaign={campaign.pk}&format=json").json()
    from_report = {t["task"]: t for t in report["multiple_choice"]["tasks"]}
    answered = [t for t in from_report.values() if t["human_majority"] is not None]
    assert len(answered) >= 3 and any(not t["complete"] for t in from_api.values())
    for row in answered:
        mine = from_api[row["task"]]
        assert (mine["majority"]["k"], mine["majority"]["m"]) == (row["k"], row["m"]) == (k, k // 2 + 1)
        assert mine["majority"]["accuracy"] == pytest.approx(row["human_majority"])
        assert mine["mean_of_raters"]["accuracy"] == pytest.approx(row["human_mean_of_raters"])


@pytest.mark.django_db
def test_one_median_reading_time_in_the_hand_in_event_and_the_report(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, roles={"manager": "manager", "ann1": "annotator"},
                             overlap=1, batch_size=2, min_reading_seconds=0)
    actions.cut_batches(campaign, actor=staff)
    start = timezone.now()
    reading = [10.0, 30.0]  # an even count: the two middle values' mean (20), not the upper one (30)
    for n, seconds in enumerate(reading):
        served = start + timedelta(minutes=n)
        lease = actions.lease_next_item(campaign, annotator=people["ann1"], now=served).assignment
        actions.submit_annotation(lease, annotator=people["ann1"], client_submission_id=sid(),
                                  answers={"needs_verification": False, "score": 2},
                                  now=served + timedelta(seconds=seconds))
    batch = campaign.batches.get(number=1)
    actions.hand_in_batch(batch, actor=people["manager"])

    event = Event.objects.get(batch=batch, kind="handed_in").figures["median_dwell_seconds"]
    report = api(staff).get(f"/api/v1/reports/?benchmark={diqad}&campaign={campaign.pk}&format=json").json()
    # The dashboard shows the report's per-annotator row (frontend/static/frontend/js/dashboard.js).
    row, = [a for a in report["annotators"] if a["annotator"] == "ann1"]
    assert event == row["median_reading_seconds"] == statistics.median(reading) == 20
