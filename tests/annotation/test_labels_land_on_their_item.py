"""A label is stored on the item it was given on, or not at all: a submit or a changed answer that names another
item than its lease's (or answer's), a QC label for an item outside the batch's current sample or given on an
earlier round's sample, a decision on an item already decided, are refused and change nothing."""
import pytest

from annotation import actions
from annotation.models import Annotation, Assignment, Disagreement, QCSampleItem

from .conftest import DIQAD_ANSWERS, api, make_campaign, sid, submit_score

pytestmark = pytest.mark.django_db


def campaign_of(staff, people, diqad, **settings):
    values = {"overlap": 1, "batch_size": 4, "qc_sample_size": 2, "min_reading_seconds": 0, "seed": 1, **settings}
    campaign = make_campaign(staff, people, diqad, **values)
    actions.cut_batches(campaign, actor=staff)
    return campaign


def test_a_submit_naming_another_item_than_its_lease_is_refused(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad)
    first = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    other = actions.lease_next_item(campaign, annotator=people["ann2"]).assignment
    client = api(people["ann1"])
    url = f"/api/v1/assignments/{first.pk}/submit/"
    wrong = client.post(url, {"client_submission_id": sid(), "item": other.item_id, "answers": DIQAD_ANSWERS[1]},
                        format="json")
    assert wrong.status_code == 409 and wrong.json()["code"] == "wrong_item", wrong.json()
    assert not Annotation.objects.exists()
    assert Assignment.objects.get(pk=first.pk).status == "leased"
    right = client.post(url, {"client_submission_id": sid(), "item": first.item_id, "answers": DIQAD_ANSWERS[1]},
                        format="json")
    assert right.status_code == 201
    assert Annotation.objects.get().item_id == first.item_id


def test_a_changed_answer_naming_another_item_is_refused(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad)
    earlier = submit_score(actions.lease_next_item(campaign, annotator=people["ann1"]).assignment, people["ann1"], 2)
    last = submit_score(actions.lease_next_item(campaign, annotator=people["ann1"]).assignment, people["ann1"], 2)
    client = api(people["ann1"])
    url = f"/api/v1/annotations/{last.annotation.pk}/amend/"
    wrong = client.post(url, {"item": earlier.annotation.item_id, "answers": DIQAD_ANSWERS[0]}, format="json")
    assert wrong.status_code == 409 and wrong.json()["code"] == "wrong_item"
    assert Annotation.objects.get(pk=last.annotation.pk).answers == DIQAD_ANSWERS[2]
    right = client.post(url, {"item": last.annotation.item_id, "answers": DIQAD_ANSWERS[0]}, format="json")
    assert right.status_code == 200
    assert Annotation.objects.get(pk=last.annotation.pk).answers == DIQAD_ANSWERS[0]


def test_a_qc_label_lands_only_on_the_current_sample_of_its_batch(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, max_rounds=3)
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    first, second = campaign.batches.order_by("number")
    for batch in (first, second):
        actions.hand_in_batch(batch, actor=people["ann1"])
    actions.start_review(first, actor=people["qc"])
    qc = api(people["qc"])
    label = f"/api/v1/batches/{first.pk}/qc_label/"
    elsewhere = second.reviews.get().sample.first().batch_item_id
    outside = qc.post(label, {"batch_item": elsewhere, "value": 1}, format="json")
    assert outside.status_code == 404 and outside.json()["code"] == "not_in_sample"
    sampled = [entry.batch_item_id for entry in first.reviews.get().sample.order_by("position")]
    for entry in sampled:
        assert qc.post(label, {"batch_item": entry, "value": 1, "round": 1}, format="json").status_code == 200
    actions.reject_batch(first, actor=people["qc"], reason="Score 1, not 2.")
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 1)
    actions.hand_in_batch(first, actor=people["ann1"])
    actions.start_review(first, actor=people["qc"])
    # A label given on round 1's sample, arriving once the batch is reviewed in round 2, is refused.
    entry = first.reviews.get(round=2).sample.first()
    stale = qc.post(label, {"batch_item": entry.batch_item_id, "value": 0, "round": 1}, format="json")
    assert stale.status_code == 409 and stale.json()["code"] == "wrong_item"
    assert QCSampleItem.objects.get(pk=entry.pk).qc_value is None
    assert not QCSampleItem.objects.filter(review__batch=second).exclude(qc_value=None).exists()


def test_a_decision_on_an_item_already_decided_is_refused(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, overlap=2, disagreement_policy="adjudicate")
    for name, score in (("ann1", 1), ("ann2", 0)):
        submit_score(actions.lease_next_item(campaign, annotator=people[name]).assignment, people[name], score)
    disagreement = Disagreement.objects.get()
    url = f"/api/v1/disagreements/{disagreement.pk}/resolve/"
    assert api(people["expert"]).post(url, {"value": 1}, format="json").status_code == 200
    again = api(people["trainer"]).post(url, {"value": 0}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "already_resolved"
    disagreement.refresh_from_db()
    assert disagreement.resolved_value == 1 and disagreement.resolved_by == people["expert"]
