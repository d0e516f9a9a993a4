"""Changing one's last answer tells nothing about the peer's label.

An annotator labels an item their peer has labelled already, then changes the answer. Whether the peer gave
the first answer or the changed one, everything the annotator can read afterwards (the change's answer, a
second change, their last answer, their leases and labels, their campaigns, the home and annotation pages)
is the same: otherwise they could try values until the answer showed that they matched. The change made
after the peer's label is shown to the experts as such, and it never closes the disagreement by itself.
"""
import re

import pytest
from django.db import transaction
from django.test import Client

from annotation import actions
from annotation.models import Annotation, Disagreement, Event

from .conftest import DIQAD_ANSWERS, api, make_campaign, sid, submit_score

pytestmark = pytest.mark.django_db

# Values that differ between two runs whatever the labels (ids drawn from sequences, clocks, random ids).
VOLATILE = {"id", "client_submission_id", "submitted_at", "served_at", "expires_at", "dwell_seconds",
            "seconds_until_submit_allowed", "created_at", "updated_at", "closed_at"}


def steady(value):
    if isinstance(value, dict):
        return {k: "*" if k in VOLATILE else steady(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [steady(v) for v in value]
    return value


def steady_page(html):
    html = re.sub(r'(name="csrfmiddlewaretoken" value|data-csrf)="[^"]*"', "csrf", html)
    return re.sub(r'data-assignment="\d+"', "data-assignment", html)


def annotator_reads(campaign, annotator, peer, peer_score):
    """The peer labels every item of the batch with `peer_score` (DiQAD score); then the annotator labels one of
    them 2 and changes it to 1, and to 0. Returns all the annotator could read on the way, ids and clocks left
    out."""
    for _ in range(4):
        lease = actions.lease_next_item(campaign, annotator=peer)
        submit_score(lease.assignment, peer, peer_score)
    client = api(annotator)
    seen = {}
    lease = client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]
    submitted = client.post(f"/api/v1/assignments/{lease['id']}/submit/",
                            {"answers": DIQAD_ANSWERS[2], "client_submission_id": sid()}, format="json")
    seen["submit"] = (submitted.status_code, submitted.json())
    mine = Annotation.objects.get(annotator=annotator)
    for n, score in enumerate((1, 0)):
        changed = client.post(f"/api/v1/annotations/{mine.pk}/amend/",
                              {"answers": DIQAD_ANSWERS[score], "item": mine.item_id}, format="json")
        seen[f"amend {n}"] = (changed.status_code, changed.json())
    # Keyed by what is read, not by the address: the annotation's id differs between the two runs.
    for name, url in (("last answer", f"/api/v1/campaigns/{campaign.pk}/last_answer/"),
                      ("my labels", "/api/v1/annotations/"), ("my label", f"/api/v1/annotations/{mine.pk}/"),
                      ("campaigns", "/api/v1/campaigns/"), ("campaign", f"/api/v1/campaigns/{campaign.pk}/"),
                      ("settings", f"/api/v1/campaigns/{campaign.pk}/settings/"),
                      ("assignments", "/api/v1/assignments/"), ("memberships", "/api/v1/memberships/")):
        response = client.get(url)
        seen[name] = (response.status_code, response.json())
    next_lease = client.post(f"/api/v1/campaigns/{campaign.pk}/next/")
    seen["next"] = (next_lease.status_code, next_lease.json())
    pages = Client()
    pages.force_login(annotator)
    for url in ("/", f"/campaigns/{campaign.pk}/annotate/"):
        response = pages.get(url, follow=True)
        seen[url] = (response.status_code, steady_page(response.content.decode()))
    return steady(seen)


@pytest.mark.parametrize("policy", ["adjudicate", "extra_annotator", "majority"])
def test_what_the_annotator_reads_is_the_same_whether_the_peer_agrees_or_not(staff, people, diqad, policy):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=4, qc_sample_size=4, seed=1,
                             disagreement_policy=policy, auto_hand_in=True)
    actions.cut_batches(campaign, actor=staff)
    runs = {}
    for peer_score in (1, 2):  # the peer gave the changed answer; the peer gave the first answer
        with transaction.atomic():
            runs[peer_score] = annotator_reads(campaign, people["ann1"], people["ann2"], peer_score)
            transaction.set_rollback(True)
    differ = [key for key in runs[1] if runs[1][key] != runs[2][key]]
    assert not differ, "\n".join(f"{key}:\n  peer gave 1: {runs[1][key]}\n  peer gave 2: {runs[2][key]}"
                                 for key in differ)
    assert runs[1]["amend 0"][0] == runs[1]["amend 1"][0] == 200
    assert runs[1]["amend 0"][1]["annotation"]["value"] == 1
    assert "disagreements" not in str(runs[1]["amend 0"][1]["progress"])


def test_a_change_after_the_peers_label_keeps_the_disagreement_open_and_tells_the_experts(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=1, seed=1,
                             disagreement_policy="adjudicate", auto_hand_in=True)
    actions.cut_batches(campaign, actor=staff)
    peer = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(peer.assignment, people["ann1"], 1)
    lease = actions.lease_next_item(campaign, annotator=people["ann2"])
    submit_score(lease.assignment, people["ann2"], 2)
    mine = Annotation.objects.get(annotator=people["ann2"])
    actions.amend_annotation(mine, annotator=people["ann2"], answers=DIQAD_ANSWERS[1])  # now as the peer
    disagreement = Disagreement.objects.get()
    mine.batch_item.refresh_from_db()
    assert disagreement.status == "open" and mine.batch_item.status == "disagreement"
    assert mine.batch_item.batch.state == "annotating"  # the change did not settle the item (nor hand it in)
    assert disagreement.labels == [
        {"annotator": "ann1", "value": 1},
        {"annotator": "ann2", "value": 1, "amended_after_peer": True, "first_value": 2,
         "amended_at": disagreement.labels[1]["amended_at"]}]
    event = Event.objects.get(kind="label_changed")
    assert event.figures["after_peer"] is True and event.figures["disagreement"] == disagreement.pk
    expert = api(people["expert"])
    listed = expert.get(f"/api/v1/disagreements/{disagreement.pk}/").json()
    assert listed["amended_after_peer"] is True and listed["status"] == "open"
    answers = expert.get(f"/api/v1/disagreements/{disagreement.pk}/answers/").json()["answers"]
    assert [(a["annotator"], a["value"], a["amended_after_peer"], a.get("first_value")) for a in answers] == [
        ("ann1", 1, False, None), ("ann2", 1, True, 2)]
    # The experts decide it as any other; then the batch goes on by itself.
    actions.resolve_disagreement(disagreement, actor=people["expert"], value=1, reason="both say 1 now")
    assert Disagreement.objects.get().status == "resolved"


def test_labels_that_agreed_and_differ_after_a_change_open_a_marked_disagreement(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=2, seed=1, disagreement_policy="adjudicate")
    actions.cut_batches(campaign, actor=staff)
    peer = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(peer.assignment, people["ann1"], 2)
    lease = actions.lease_next_item(campaign, annotator=people["ann2"])
    assert lease.assignment.batch_item_id == peer.assignment.batch_item_id
    submit_score(lease.assignment, people["ann2"], 2)
    assert not Disagreement.objects.exists()
    mine = Annotation.objects.get(annotator=people["ann2"])
    actions.amend_annotation(mine, annotator=people["ann2"], answers=DIQAD_ANSWERS[0])
    disagreement = Disagreement.objects.get()
    assert disagreement.status == "open"
    assert disagreement.labels[1]["amended_after_peer"] and disagreement.labels[1]["first_value"] == 2
    # A change before any other label is in is an ordinary change: nothing to mark.
    first = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(first.assignment, people["ann1"], 2)
    alone = Annotation.objects.filter(annotator=people["ann1"]).latest("id")
    actions.amend_annotation(alone, annotator=people["ann1"], answers=DIQAD_ANSWERS[1])
    assert Event.objects.filter(kind="label_changed").latest("id").figures["after_peer"] is False
    assert Disagreement.objects.count() == 1
