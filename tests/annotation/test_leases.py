"""Leases and submissions: reading time, retries, expiry, skipping, and the constraints behind them."""
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation import actions, tasks
from annotation.models import Annotation, Assignment, BatchItem, Event
from core.api import http_status
from core.errors import ActionError

from .conftest import DIQAD_ANSWERS, api, make_campaign, sid


@pytest.fixture
def campaign(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, min_reading_seconds=30, batch_size=8, lease_minutes=10)
    actions.cut_batches(campaign, actor=people["manager"])
    return campaign


def take(user, campaign):
    response = api(user).post(f"/api/v1/campaigns/{campaign.pk}/next/")
    assert response.status_code == 200
    return response.json()


def submit(user, assignment_id, answers=DIQAD_ANSWERS[2], submission_id=None):
    return api(user).post(f"/api/v1/assignments/{assignment_id}/submit/",
                          {"client_submission_id": submission_id or sid(), "answers": answers}, format="json")


def wait(assignment_id, seconds):
    """Move the lease back in time instead of sleeping."""
    Assignment.objects.filter(pk=assignment_id).update(served_at=F("served_at") - timedelta(seconds=seconds),
                                                       expires_at=F("expires_at") - timedelta(seconds=seconds))


@pytest.mark.django_db
def test_submit_before_the_minimum_reading_time_is_refused_and_the_item_stays_leased(people, campaign):
    lease = take(people["ann1"], campaign)["assignment"]
    assert 29 <= lease["seconds_until_submit_allowed"] <= 30
    early = submit(people["ann1"], lease["id"])
    assert early.status_code == 409
    body = early.json()
    assert body["code"] == "too_early" and 0 < body["seconds_left"] <= 30 and "detail" in body
    assert Assignment.objects.get(pk=lease["id"]).status == "leased" and not Annotation.objects.exists()
    again = take(people["ann1"], campaign)
    assert again["status"] == "resumed" and again["assignment"]["id"] == lease["id"]
    wait(lease["id"], 31)
    assert take(people["ann1"], campaign)["assignment"]["seconds_until_submit_allowed"] == 0
    done = submit(people["ann1"], lease["id"])
    assert done.status_code == 201 and done.json()["annotation"]["dwell_seconds"] >= 31


@pytest.mark.django_db
def test_a_retry_with_the_same_submission_id_returns_the_first_result(people, campaign):
    lease = take(people["ann1"], campaign)["assignment"]
    wait(lease["id"], 60)
    submission_id = sid()
    first = submit(people["ann1"], lease["id"], submission_id=submission_id)
    retry = submit(people["ann1"], lease["id"], DIQAD_ANSWERS[0], submission_id=submission_id)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json()["replayed"] is True and retry.json()["annotation"] == first.json()["annotation"]
    assert Annotation.objects.count() == 1
    other = submit(people["ann1"], lease["id"])
    assert other.status_code == 409 and other.json()["code"] == "already_submitted"
    lease2 = take(people["ann2"], campaign)["assignment"]
    wait(lease2["id"], 60)
    stolen = submit(people["ann2"], lease2["id"], submission_id=submission_id)
    assert stolen.status_code == 409 and stolen.json()["code"] == "submission_id_reused"


@pytest.mark.django_db
def test_answers_are_validated_against_the_form(people, campaign):
    lease = take(people["ann1"], campaign)["assignment"]
    wait(lease["id"], 60)
    # DiQAD: reasons depend on the score; score 2 takes none, score 1 needs reasons from its own list.
    bad = submit(people["ann1"], lease["id"], {"needs_verification": False, "score": 1, "reasons_0": ["not_relevant"]})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_answers"
    assert set(bad.json()["errors"]) == {"reasons_1", "reasons_0"}
    assert submit(people["ann1"], lease["id"], {"score": 2, "needs_verification": "yes"}).status_code == 400
    excluded = submit(people["ann1"], lease["id"], {"needs_verification": False, "score": "abandon"})
    assert excluded.status_code == 201
    label = excluded.json()["annotation"]
    assert label["excluded"] is True and label["excluded_by"] == ["score"]


@pytest.mark.django_db
def test_each_item_goes_to_k_distinct_annotators_and_no_more(people, campaign):
    seen = {}
    for name in ("ann1", "ann2", "ann3"):
        while (body := take(people[name], campaign))["status"] != "no_work":
            wait(body["assignment"]["id"], 60)
            assert submit(people[name], body["assignment"]["id"]).status_code == 201
            seen.setdefault(body["assignment"]["item"]["external_id"], []).append(name)
    assert len(seen) == 8 and all(len(names) == 2 == len(set(names)) for names in seen.values())
    assert seen["dq-001"] == ["ann1", "ann2"] and "ann3" not in {n for names in seen.values() for n in names}


@pytest.mark.django_db
def test_the_database_refuses_a_third_lease_and_a_second_label_by_one_person(people, campaign):
    first = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    actions.lease_next_item(campaign, annotator=people["ann2"])
    item = BatchItem.objects.get(pk=first.batch_item_id)
    assert (item.taken, item.needed) == (2, 2)
    with pytest.raises(IntegrityError), transaction.atomic():
        BatchItem.objects.filter(pk=item.pk).update(taken=F("taken") + 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(campaign=campaign, batch_item=item, item=item.item, annotator=people["ann3"], round=1,
                                  slot=1, settings=first.settings, served_at=timezone.now(),
                                  expires_at=timezone.now() + timedelta(minutes=1))
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(campaign=campaign, batch_item=item, item=item.item, annotator=people["ann1"], round=1,
                                  slot=3, settings=first.settings, served_at=timezone.now(),
                                  expires_at=timezone.now() + timedelta(minutes=1))


@pytest.mark.django_db
def test_expired_leases_are_reclaimed_by_the_command_and_the_task(people, campaign):
    stale = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    actions.lease_next_item(campaign, annotator=people["ann2"])
    wait(stale.pk, 11 * 60)
    call_command("reclaim_leases")
    stale.refresh_from_db()
    assert stale.status == "expired" and BatchItem.objects.get(pk=stale.batch_item_id).taken == 1
    assert Event.objects.filter(kind="leases_reclaimed", figures__count=1).exists()
    # The freed slot goes to the next annotator who asks; the idle one cannot submit any more.
    assert actions.lease_next_item(campaign, annotator=people["ann3"]).assignment.batch_item_id == stale.batch_item_id
    late = submit(people["ann1"], stale.pk)
    assert late.status_code == 409 and late.json()["code"] == "lease_closed"
    other = actions.lease_next_item(campaign, annotator=people["ann2"]).assignment
    wait(other.pk, 11 * 60)
    assert tasks.reclaim_expired_leases() == 1


@pytest.mark.django_db
def test_an_idle_lease_does_not_strand_its_item_even_before_the_periodic_task(people, staff, diqad):
    campaign = actions.create_campaign(actor=staff, name="one", benchmark=diqad, protocol="production",
                                       settings={"overlap": 1}, selection={"external_ids": ["dq-001"]})
    for name in ("ann1", "ann2"):
        actions.add_member(campaign, actor=staff, user=people[name], role="annotator")
    actions.cut_batches(campaign, actor=staff)
    idle = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    assert actions.lease_next_item(campaign, annotator=people["ann2"]) is None
    wait(idle.pk, 31 * 60)
    lease = actions.lease_next_item(campaign, annotator=people["ann2"])
    assert lease.assignment.batch_item_id == idle.batch_item_id and lease.assignment.slot == 1
    idle.refresh_from_db()
    assert idle.status == "expired"


@pytest.mark.django_db
def test_release_gives_the_item_to_someone_else(people, campaign):
    lease = take(people["ann1"], campaign)["assignment"]
    released = api(people["ann1"]).post(f"/api/v1/assignments/{lease['id']}/release/")
    assert released.status_code == 200 and released.json()["status"] == "released"
    assert take(people["ann1"], campaign)["assignment"]["item"]["id"] != lease["item"]["id"]
    assert take(people["ann2"], campaign)["assignment"]["item"]["id"] == lease["item"]["id"]
    assert api(people["ann2"]).post(f"/api/v1/assignments/{lease['id']}/release/").status_code == 403


@pytest.mark.django_db
def test_actions_check_roles_themselves(people, campaign):
    with pytest.raises(ActionError) as refused:
        actions.lease_next_item(campaign, annotator=people["qc"])
    assert refused.value.code == "forbidden" and http_status(refused.value) == 403


@pytest.mark.django_db
def test_a_deactivated_annotator_can_neither_take_nor_submit(people, campaign):
    lease = take(people["ann1"], campaign)["assignment"]
    assert set(lease["item"]["meta"]) <= {"domain", "language", "personality"}
    wait(lease["id"], 60)
    membership = campaign.memberships.get(user=people["ann1"])
    changed = api(people["manager"]).patch(f"/api/v1/memberships/{membership.pk}/", {"active": False}, format="json")
    assert changed.status_code == 200 and changed.json()["active"] is False
    assert api(people["ann1"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").status_code == 404  # no longer a member
    refused = submit(people["ann1"], lease["id"])
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert Event.objects.filter(kind="member_deactivated", figures__user="ann1").exists()
