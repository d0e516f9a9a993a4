"""A whole DiQAD-style run over the HTTP API: two annotators, a disagreement adjudicated, hand-in, QC
rejects, round 2, QC accepts; round-1 labels stay, superseded; the event log tells the story in order."""
import pytest

from annotation.models import Annotation, Batch

from .conftest import DIQAD_ANSWERS, api, make_campaign, sid

TRUTH = {"dq-001": 2, "dq-002": 1, "dq-003": 0, "dq-004": 2, "dq-005": 1, "dq-006": 0, "dq-007": 2, "dq-008": 1}


def label_everything(client, campaign_id, choose):
    """Take and submit items until the campaign has none left for this annotator; returns what was seen."""
    seen = []
    while True:
        response = client.post(f"/api/v1/campaigns/{campaign_id}/next/")
        assert response.status_code == 200, response.content
        body = response.json()
        if body["status"] == "no_work":
            return seen
        lease = body["assignment"]
        assert "source_gold" not in response.content.decode() and "gold" not in lease["item"]
        external_id = lease["item"]["external_id"]
        seen.append(external_id)
        body = {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[choose(external_id)]}
        submitted = client.post(f"/api/v1/assignments/{lease['id']}/submit/", body, format="json")
        assert submitted.status_code == 201, submitted.content


@pytest.mark.django_db
def test_diqad_run_through_the_api(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, min_reading_seconds=0, batch_size=8, qc_sample_size=8,
                             disagreement_policy="adjudicate", seed=3)
    names = ("manager", "ann1", "ann2", "qc", "expert", "trainer", "viewer")
    manager, ann1, ann2, qc, expert, trainer, viewer = (api(people[name]) for name in names)
    cut = manager.post(f"/api/v1/campaigns/{campaign.pk}/cut_batches/")
    assert cut.status_code == 201 and len(cut.json()) == 1
    batch_id = cut.json()[0]["id"]

    # Round 1: both annotators agree everywhere except dq-001, and both get dq-005 and dq-006 wrong;
    # dq-008 is excluded by both (private data): it leaves the data set and the QC sample.
    def round1(annotator):
        def choose(external_id):
            if external_id == "dq-001" and annotator == "ann2":
                return 1
            if external_id in ("dq-005", "dq-006"):
                return 2
            return -1 if external_id == "dq-008" else TRUTH[external_id]
        return choose

    assert sorted(label_everything(ann1, campaign.pk, round1("ann1"))) == sorted(TRUTH)
    assert sorted(label_everything(ann2, campaign.pk, round1("ann2"))) == sorted(TRUTH)
    assert label_everything(api(people["ann3"]), campaign.pk, lambda _: 2) == []  # k=2: nothing left for a third

    # The manager is told that an item waits for a decision; the labeller's hand-in is taken all the same (it
    # goes in with the decision), so that nothing tells them a peer's label differed from theirs.
    refused = manager.post(f"/api/v1/batches/{batch_id}/hand_in/")
    assert refused.status_code == 409
    assert refused.json()["code"] == "not_complete" and refused.json()["disagreements"] == 1
    requested = ann1.post(f"/api/v1/batches/{batch_id}/hand_in/")
    assert requested.status_code == 200 and requested.json()["state"] == "handed_in"
    assert "disagreements" not in requested.json()["progress"]

    by_guideline = trainer.get(f"/api/v1/campaigns/{campaign.pk}/disagreements/").json()["results"]
    assert [(g["guideline_version"], g["total"], g["open"]) for g in by_guideline] == [(1, 1, 1)]
    disagreement = expert.get("/api/v1/disagreements/", {"campaign": campaign.pk, "status": "open"}).json()
    disagreement = disagreement["results"][0]
    assert disagreement["external_id"] == "dq-001"
    assert sorted(label["value"] for label in disagreement["labels"]) == [1, 2]
    resolve = f"/api/v1/disagreements/{disagreement['id']}/resolve/"
    assert ann1.post(resolve, {"value": 2}, format="json").status_code == 403
    bad = expert.post(f"/api/v1/disagreements/{disagreement['id']}/resolve/", {"value": 7}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_value"
    resolved = expert.post(f"/api/v1/disagreements/{disagreement['id']}/resolve/",
                           {"value": 2, "reason": "the answer is complete and actionable"}, format="json")
    assert resolved.status_code == 200 and resolved.json()["resolved_value"] == 2

    assert manager.get(f"/api/v1/batches/{batch_id}/").json()["state"] == "handed_in"  # at the decision
    handed = ann1.post(f"/api/v1/batches/{batch_id}/hand_in/")
    assert handed.status_code == 200 and handed.json()["state"] == "handed_in"
    assert qc.post(f"/api/v1/batches/{batch_id}/start_review/").json()["state"] == "in_review"
    sample = qc.get(f"/api/v1/batches/{batch_id}/qc_sample/").json()["sample"]
    assert len(sample) == 7 and "dq-008" not in {s["item"]["external_id"] for s in sample}
    for entry in sample:
        body = {"batch_item": entry["batch_item"], "value": TRUTH[entry["item"]["external_id"]]}
        labelled = qc.post(f"/api/v1/batches/{batch_id}/qc_label/", body, format="json")
        assert labelled.status_code == 200

    below = qc.post(f"/api/v1/batches/{batch_id}/accept/", {}, format="json")
    assert below.status_code == 409 and below.json()["code"] == "below_threshold"
    assert below.json()["figures"]["correct"] == 5 and below.json()["figures"]["n"] == 7
    no_reason = qc.post(f"/api/v1/batches/{batch_id}/reject/", {"reason": ""}, format="json")
    assert no_reason.status_code == 400 and no_reason.json()["code"] == "reason_required"
    assert viewer.post(f"/api/v1/batches/{batch_id}/reject/", {"reason": "no"}, format="json").status_code == 403
    rejected = qc.post(f"/api/v1/batches/{batch_id}/reject/", {"reason": "scores 1 and 0 read as 2"}, format="json")
    assert rejected.status_code == 200
    assert (rejected.json()["state"], rejected.json()["round"]) == ("annotating", 2)

    # Round 2: the same two annotators label again (allowed: it is a new round) and get it right.
    assert len(label_everything(ann1, campaign.pk, TRUTH.get)) == 8
    assert len(label_everything(ann2, campaign.pk, TRUTH.get)) == 8
    assert manager.post(f"/api/v1/batches/{batch_id}/hand_in/").status_code == 200
    qc.post(f"/api/v1/batches/{batch_id}/start_review/")
    for entry in qc.get(f"/api/v1/batches/{batch_id}/qc_sample/").json()["sample"]:
        qc.post(f"/api/v1/batches/{batch_id}/qc_label/",
                {"batch_item": entry["batch_item"], "value": TRUTH[entry["item"]["external_id"]]}, format="json")
    accepted = qc.post(f"/api/v1/batches/{batch_id}/accept/", {"reason": "all sampled labels right"}, format="json")
    assert accepted.status_code == 200 and accepted.json()["state"] == "accepted"
    assert accepted.json()["accepted_below_threshold"] is False

    # Nothing was deleted: round 1's 16 labels are there, superseded; round 2's are current.
    labels = Annotation.objects.filter(campaign=campaign)
    assert labels.filter(round=1, superseded_at__isnull=False).count() == 16
    assert labels.filter(round=2, superseded_at__isnull=True).count() == 16
    superseded = viewer.get("/api/v1/annotations/", {"campaign": campaign.pk, "superseded": "true"}).json()
    assert superseded["count"] == 16 and {a["round"] for a in superseded["results"]} == {1}

    events = viewer.get(f"/api/v1/batches/{batch_id}/events/").json()["results"]
    assert [(e["kind"], e["from_state"], e["to_state"], e["round"]) for e in events] == [
        ("batch_created", "", "open", 1),
        ("batch_started", "open", "annotating", 1),
        ("hand_in_requested", "", "", 1),
        ("disagreement_resolved", "", "", 1),
        ("handed_in", "annotating", "handed_in", 1),
        ("review_started", "handed_in", "in_review", 1),
        ("rejected", "in_review", "rejected", 1),
        ("reopened", "rejected", "annotating", 2),
        ("handed_in", "annotating", "handed_in", 2),
        ("review_started", "handed_in", "in_review", 2),
        ("accepted", "in_review", "accepted", 2),
    ]
    # The first hand-in: asked for by ann1, made when the expert's decision arrived.
    actors = ["manager", "ann1", "ann1", "expert", "expert", "qc", "qc", "qc", "manager", "qc", "qc"]
    assert [e["actor"] for e in events] == actors
    rejected_event, accepted_event = events[6], events[10]
    assert rejected_event["reason"] == "scores 1 and 0 read as 2" and rejected_event["figures"]["passed"] is False
    assert rejected_event["figures"]["overall"] == pytest.approx(5 / 7)
    assert events[7]["figures"]["superseded"] == 16
    assert accepted_event["figures"]["passed"] is True and accepted_event["figures"]["override"] is False
    assert events[4]["figures"]["excluded"] == 1 and events[4]["figures"]["qc_sample"] == 7
    assert Batch.objects.get(pk=batch_id).round == 2


@pytest.mark.django_db
def test_accepting_below_threshold_needs_an_override_reason_and_is_flagged(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=1, batch_size=8, qc_sample_size=4)
    api(people["manager"]).post(f"/api/v1/campaigns/{campaign.pk}/cut_batches/")
    label_everything(api(people["ann1"]), campaign.pk, lambda _: 2)
    batch = Batch.objects.get(campaign=campaign)
    qc = api(people["qc"])
    api(people["ann1"]).post(f"/api/v1/batches/{batch.pk}/hand_in/")
    own = api(people["ann1"]).post(f"/api/v1/batches/{batch.pk}/start_review/")
    assert own.status_code == 403
    qc.post(f"/api/v1/batches/{batch.pk}/start_review/")
    sample = qc.get(f"/api/v1/batches/{batch.pk}/qc_sample/").json()["sample"]
    incomplete = qc.post(f"/api/v1/batches/{batch.pk}/accept/", {}, format="json")
    assert incomplete.status_code == 409 and incomplete.json()["code"] == "sample_incomplete"
    for entry in sample:
        qc.post(f"/api/v1/batches/{batch.pk}/qc_label/", {"batch_item": entry["batch_item"], "value": 1}, format="json")
    override = {"override_reason": "client deadline; relabel later"}
    accepted = qc.post(f"/api/v1/batches/{batch.pk}/accept/", override, format="json")
    assert accepted.status_code == 200 and accepted.json()["accepted_below_threshold"] is True
    event = api(people["viewer"]).get(f"/api/v1/batches/{batch.pk}/events/").json()["results"][-1]
    assert (event["kind"], event["figures"]["override"]) == ("accepted", True)
    assert event["reason"] == override["override_reason"]
