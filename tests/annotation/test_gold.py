"""Gold panel: experts vote blind, the majority becomes gold, ties go to adjudication, versions freeze."""
import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from annotation import actions
from annotation.models import FrozenGoldError, GoldLabel
from benchmarks.models import Item

from .conftest import api, submit_score

VOTES = {"dq-001": [2, 2, 1], "dq-002": [1, 1, 1], "dq-003": [0, 1, 2]}


@pytest.mark.django_db
def test_gold_panel_majority_ties_adjudication_and_frozen_versions(staff, people, diqad):
    campaign = actions.create_campaign(actor=staff, name="panel", benchmark=diqad, protocol="gold_panel",
                                       selection={"external_ids": sorted(VOTES)})
    experts = [User.objects.create_user(f"e{i}") for i in range(3)]
    for expert in experts:
        actions.add_member(campaign, actor=staff, user=expert, role="expert")
    for name, role in (("manager", "manager"), ("trainer", "trainer"), ("viewer", "viewer")):
        actions.add_member(campaign, actor=staff, user=people[name], role=role)
    actions.cut_batches(campaign, actor=staff)
    for position, expert in enumerate(experts):
        while lease := actions.lease_next_item(campaign, annotator=expert):
            vote = VOTES[lease.assignment.item.external_id][position]
            submit_score(lease.assignment, expert, vote)

    manager = api(people["manager"])
    first = manager.post(f"/api/v1/campaigns/{campaign.pk}/gold_versions/", {"method": "campaign"}, format="json")
    assert first.status_code == 201 and first.json()["labels"] == 2 and first.json()["citation"] == "diqad-demo@gold-v1"
    listed = api(people["viewer"]).get(f"/api/v1/gold-versions/{first.json()['id']}/labels/").json()["results"]
    labels = {g["external_id"]: g for g in listed}
    majority = labels["dq-001"]
    assert (majority["value"], majority["method"], majority["margin"]) == (2, "expert_majority", 1)
    assert labels["dq-001"]["votes"] == {"2": 2, "1": 1}
    assert labels["dq-002"]["margin"] == 3 and "dq-003" not in labels

    tie = api(people["trainer"]).get("/api/v1/disagreements/", {"campaign": campaign.pk, "status": "open"})
    tie = tie.json()["results"]
    assert [d["external_id"] for d in tie] == ["dq-003"]
    own = api(experts[0]).post(f"/api/v1/disagreements/{tie[0]['id']}/resolve/", {"value": 0}, format="json")
    assert own.status_code == 403 and own.json()["code"] == "own_work"  # a voter does not settle their own tie
    decided = api(people["trainer"]).post(f"/api/v1/disagreements/{tie[0]['id']}/resolve/",
                                          {"value": 0, "reason": "the reply ignores the question"}, format="json")
    assert decided.status_code == 200

    second = manager.post(f"/api/v1/campaigns/{campaign.pk}/gold_versions/", {}, format="json").json()
    assert second["labels"] == 3 and second["number"] == 2
    frozen = manager.post(f"/api/v1/gold-versions/{second['id']}/freeze/")
    assert frozen.status_code == 200 and frozen.json()["frozen_at"]
    again = manager.post(f"/api/v1/gold-versions/{second['id']}/freeze/")
    assert again.status_code == 409 and again.json()["code"] == "gold_frozen"
    adjudicated = GoldLabel.objects.get(version_id=second["id"], item__external_id="dq-003")
    assert (adjudicated.value, adjudicated.method, adjudicated.margin) == (0, "adjudicated", 0)

    # A frozen version refuses writes in the model and, behind it, in the database.
    item = Item.objects.get(external_id="dq-004")
    with pytest.raises(FrozenGoldError):
        GoldLabel.objects.create(version_id=second["id"], item=item, value=1, method="adjudicated")
    with pytest.raises(FrozenGoldError):
        adjudicated.save()
    with pytest.raises(IntegrityError), transaction.atomic():
        GoldLabel.objects.filter(version_id=second["id"]).update(value=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        GoldLabel.objects.bulk_create([GoldLabel(version_id=second["id"], item=item, value=1, method="adjudicated")])
    with pytest.raises(IntegrityError), transaction.atomic():
        type(adjudicated.version).objects.filter(pk=second["id"]).update(frozen_at=None)
    # The draft version 1 is still open.
    GoldLabel.objects.create(version_id=first.json()["id"], item=item, value=1, method="adjudicated")
