"""Disagreement policies, settings versions, and the trainers' list of disagreements per guideline version."""
import pytest

from annotation import actions
from annotation.models import BatchItem, Disagreement, ItemStatus, Policy, Protocol
from annotation.rules import item_outcome

from .conftest import api, make_campaign, send_back, submit_score


def outcome(values, policy="adjudicate", tie_rule="none", protocol=Protocol.PRODUCTION, extra_used=0, excluded=None):
    return item_outcome(values, excluded or [False] * len(values), protocol=protocol, policy=policy, tie_rule=tie_rule,
                        seed=1, extra_used=extra_used, max_extra=1)


def test_outcomes_per_policy():
    assert outcome([2, 2]).status == ItemStatus.LABELLED and outcome([2, 2]).method == "agreement"
    assert outcome([2, 1]).status == ItemStatus.DISAGREEMENT and outcome([2, 1]).disagreement
    assert outcome([2, 1], Policy.MAJORITY).status == ItemStatus.DISAGREEMENT  # a 1-1 tie under tie rule "none"
    assert outcome([2, 1], Policy.MAJORITY, "lowest").value == 1
    assert outcome([2, 1, 2], Policy.MAJORITY).value == 2 and outcome([2, 1, 2], Policy.MAJORITY).margin == 1
    extra = outcome([2, 1], Policy.EXTRA_ANNOTATOR)
    assert extra.add_slot and extra.status == ItemStatus.PENDING
    settled = outcome([2, 1, 1], Policy.EXTRA_ANNOTATOR, extra_used=1)
    assert (settled.status, settled.value, settled.method) == (ItemStatus.LABELLED, 1, "extra_annotator")
    assert outcome([2, 1, 0], Policy.EXTRA_ANNOTATOR, extra_used=1).status == ItemStatus.DISAGREEMENT
    assert outcome([-1, -2], excluded=[True, True]).status == ItemStatus.EXCLUDED
    assert outcome([-1, 2], excluded=[True, False]).status == ItemStatus.DISAGREEMENT
    assert outcome(["A", "B", "A"], protocol=Protocol.HUMAN_BASELINE).method == "baseline"
    assert outcome([2, 1], Policy.ADJUDICATE, "lowest", protocol=Protocol.GOLD_PANEL).status == ItemStatus.DISAGREEMENT


def label(campaign, user, score):
    lease = actions.lease_next_item(campaign, annotator=user)
    submit_score(lease.assignment, user, score)
    return lease.assignment


@pytest.mark.django_db
def test_extra_annotator_policy_hands_the_item_to_a_third_person(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=8, disagreement_policy="extra_annotator")
    actions.cut_batches(campaign, actor=staff)
    first = label(campaign, people["ann1"], 2)
    label(campaign, people["ann2"], 1)
    item = BatchItem.objects.get(pk=first.batch_item_id)
    assert (item.status, item.needed) == (ItemStatus.PENDING, 3)
    waiting = Disagreement.objects.get(batch_item=item)
    early = api(people["expert"]).post(f"/api/v1/disagreements/{waiting.pk}/resolve/", {"value": 2}, format="json")
    assert early.status_code == 409 and early.json()["code"] == "awaiting_labels"
    third = label(campaign, people["ann3"], 1)
    assert third.batch_item_id == item.pk and third.slot == 3
    item.refresh_from_db()
    assert (item.status, item.final_value, item.final_method) == (ItemStatus.LABELLED, 1, "extra_annotator")
    record = Disagreement.objects.get(batch_item=item)
    assert record.status == "resolved" and record.method == "extra_annotator" and len(record.labels) == 3


@pytest.mark.django_db
def test_majority_with_a_stated_tie_rule(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=8, disagreement_policy="majority",
                             tie_rule="lowest")
    actions.cut_batches(campaign, actor=staff)
    first = label(campaign, people["ann1"], 2)
    label(campaign, people["ann2"], 0)
    item = BatchItem.objects.get(pk=first.batch_item_id)
    assert (item.status, item.final_value, item.final_method) == (ItemStatus.LABELLED, 0, "majority")


@pytest.mark.django_db
def test_settings_freeze_once_work_starts_and_disagreements_are_listed_per_guideline_version(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=8, qc_sample_size=8, guidelines="v1 rules")
    manager = api(people["manager"])
    before = manager.post(f"/api/v1/campaigns/{campaign.pk}/settings/", {"min_reading_seconds": 0}, format="json")
    assert before.status_code == 201 and before.json()["version"] == 1  # nothing started: edited in place
    refused = api(people["ann1"]).post(f"/api/v1/campaigns/{campaign.pk}/settings/", {"overlap": 3}, format="json")
    assert refused.status_code == 403
    bad = manager.post(f"/api/v1/campaigns/{campaign.pk}/settings/", {"overall_threshold": "1.5"}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] in ("invalid", "invalid_settings")

    [batch] = actions.cut_batches(campaign, actor=staff)
    for _ in range(8):
        label(campaign, people["ann1"], 2)
        label(campaign, people["ann2"], 2)
    changed = manager.post(f"/api/v1/campaigns/{campaign.pk}/settings/",
                           {"guidelines": "v2 rules: empathy first", "note": "after round 1"}, format="json")
    assert changed.status_code == 201 and changed.json()["version"] == 2
    batch.refresh_from_db()
    assert batch.settings.version == 1  # the running round keeps its version
    versions = api(people["ann1"]).get(f"/api/v1/campaigns/{campaign.pk}/settings/").json()["results"]
    assert [(v["version"], v["guidelines"]) for v in versions] == [(1, "v1 rules"), (2, "v2 rules: empathy first")]

    send_back(batch, people, "scores too generous")
    batch.refresh_from_db()
    assert (batch.round, batch.settings.version, batch.state) == (2, 2, "annotating")
    lease = api(people["ann1"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]
    assert lease["guidelines"] == {"version": 2, "language": None, "markdown": "v2 rules: empathy first",
                                   "html": "<p>v2 rules: empathy first</p>\n"}
    api(people["ann1"]).post(f"/api/v1/assignments/{lease['id']}/release/")

    # A disagreement under each guideline version: one made in round 1 by hand, one now in round 2.
    Disagreement.objects.create(campaign=campaign, batch_item=BatchItem.objects.get(batch=batch, position=1), round=1,
                                settings=campaign.settings_versions.get(version=1), labels=[], status="resolved",
                                method="adjudicated")
    label(campaign, people["ann2"], 2)
    first = BatchItem.objects.filter(batch=batch, taken=1).first()
    while (lease := actions.lease_next_item(campaign, annotator=people["ann3"])).assignment.batch_item_id != first.pk:
        actions.release_assignment(lease.assignment, annotator=people["ann3"])
    submit_score(lease.assignment, people["ann3"], 0)
    groups = api(people["trainer"]).get(f"/api/v1/campaigns/{campaign.pk}/disagreements/").json()["results"]
    assert [(g["guideline_version"], g["total"], g["open"]) for g in groups] == [(1, 1, 0), (2, 1, 1)]
    assert groups[1]["note"] == "after round 1" and groups[1]["disagreements"][0]["round"] == 2
    assert api(people["ann1"]).get(f"/api/v1/campaigns/{campaign.pk}/disagreements/").status_code == 403
