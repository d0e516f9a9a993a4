"""What annotators, QC and experts do besides labelling: the automatic hand-in, skipping with a reason,
changing one's last answer, flags for trainers, the QC's reason in round 2, blind QC review, the
override reason kept, each rater's whole answer for the expert, guidelines rendered safely."""
import pytest

from annotation import actions
from annotation.guidelines import render_guidelines
from annotation.models import Annotation, BatchState, Disagreement, Event, ItemFlag
from core.errors import ActionError

from .conftest import DIQAD_ANSWERS, api, make_campaign, send_back, sid, submit_score

pytestmark = pytest.mark.django_db


def campaign_of(staff, people, diqad, **settings):
    values = {"overlap": 1, "batch_size": 8, "qc_sample_size": 8, "seed": 1, **settings}
    campaign = make_campaign(staff, people, diqad, **values)
    actions.cut_batches(campaign, actor=staff)
    return campaign


def label_all(campaign, user, score=2):
    while lease := actions.lease_next_item(campaign, annotator=user):
        submit_score(lease.assignment, user, score)


def test_the_last_final_label_hands_the_batch_in_by_itself(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, auto_hand_in=True)
    batch = campaign.batches.get()
    for _ in range(7):
        lease = actions.lease_next_item(campaign, annotator=people["ann1"])
        submit_score(lease.assignment, people["ann1"], 2)
    batch.refresh_from_db()
    assert batch.state == BatchState.ANNOTATING
    lease = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(lease.assignment, people["ann1"], 2)
    batch.refresh_from_db()
    assert batch.state == BatchState.HANDED_IN and batch.reviews.count() == 1
    event = Event.objects.get(batch=batch, kind="handed_in")
    assert event.actor == people["ann1"] and "by itself" in event.reason


def test_without_the_setting_the_batch_waits_for_a_hand_in(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, auto_hand_in=False)
    label_all(campaign, people["ann1"])
    assert campaign.batches.get().state == BatchState.ANNOTATING


def test_deciding_the_last_disagreement_hands_the_batch_in(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, overlap=2, auto_hand_in=True, disagreement_policy="adjudicate")
    label_all(campaign, people["ann1"], 2)
    scores = iter([1] + [2] * 7)  # ann2 disagrees on their first item only
    while lease := actions.lease_next_item(campaign, annotator=people["ann2"]):
        submit_score(lease.assignment, people["ann2"], next(scores))
    batch = campaign.batches.get()
    assert batch.state == BatchState.ANNOTATING  # one item waits for the expert
    actions.resolve_disagreement(Disagreement.objects.get(), actor=people["expert"], value=1, reason="lacks depth")
    batch.refresh_from_db()
    assert batch.state == BatchState.HANDED_IN
    assert Event.objects.get(batch=batch, kind="handed_in").actor == people["expert"]


def test_a_skip_keeps_its_reason(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"])
    response = api(people["ann1"]).post(f"/api/v1/assignments/{lease.assignment.pk}/release/",
                                        {"reason": "The dialogue is cut off."}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "released"
    event = Event.objects.get(kind="item_skipped")
    assert event.reason == "The dialogue is cut off." and event.actor == people["ann1"]


def test_an_annotator_changes_their_last_answer_until_hand_in(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, overlap=2)
    first = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(first.assignment, people["ann1"], 2)
    second = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(second.assignment, people["ann1"], 2)
    older, last = Annotation.objects.filter(annotator=people["ann1"]).order_by("id")
    client = api(people["ann1"])
    mine = client.get(f"/api/v1/campaigns/{campaign.pk}/last_answer/").json()
    assert mine["annotation"]["id"] == last.pk and "source_gold" not in str(mine)
    refused = client.post(f"/api/v1/annotations/{older.pk}/amend/", {"answers": DIQAD_ANSWERS[1]}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "not_changeable"
    invalid = client.post(f"/api/v1/annotations/{last.pk}/amend/", {"answers": {"score": 7}}, format="json")
    assert invalid.status_code == 400 and Annotation.objects.get(pk=last.pk).value == 2
    changed = client.post(f"/api/v1/annotations/{last.pk}/amend/", {"answers": DIQAD_ANSWERS[1]}, format="json")
    assert changed.status_code == 200, changed.json()
    assert changed.json()["progress"]["left_for_you"] == 6
    last.refresh_from_db()
    assert last.value == 1 and last.answers == DIQAD_ANSWERS[1]
    event = Event.objects.get(kind="label_changed")
    assert event.figures["before"] == DIQAD_ANSWERS[2] and event.figures["after"] == DIQAD_ANSWERS[1]
    assert api(people["ann2"]).post(f"/api/v1/annotations/{last.pk}/amend/", {"answers": DIQAD_ANSWERS[2]},
                                    format="json").status_code == 403


def test_a_change_after_the_peers_label_leaves_the_disagreement_to_the_experts(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, overlap=2, batch_size=1)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"])
    submit_score(lease.assignment, people["ann1"], 2)
    other = actions.lease_next_item(campaign, annotator=people["ann2"])
    assert other.assignment.batch_item_id == lease.assignment.batch_item_id
    submit_score(other.assignment, people["ann2"], 1)
    disagreement = Disagreement.objects.get()
    assert disagreement.status == "open"
    mine = Annotation.objects.get(annotator=people["ann2"])
    actions.amend_annotation(mine, annotator=people["ann2"], answers=DIQAD_ANSWERS[2])
    disagreement.refresh_from_db()
    mine.batch_item.refresh_from_db()
    # Copying the peer does not close the disagreement: the experts see the change as made after the peer's label.
    assert mine.batch_item.status == "disagreement" and mine.batch_item.final_value is None
    assert disagreement.status == "open" and disagreement.labels[1]["amended_after_peer"]
    actions.resolve_disagreement(disagreement, actor=people["expert"], value=2)
    actions.hand_in_batch(mine.batch_item.batch, actor=people["manager"])
    with pytest.raises(ActionError) as refused:
        actions.amend_annotation(mine, annotator=people["ann2"], answers=DIQAD_ANSWERS[1])
    assert refused.value.code == "not_changeable"


def test_flags_reach_trainers_but_not_other_annotators(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"])
    client = api(people["ann1"])
    url = f"/api/v1/assignments/{lease.assignment.pk}/flag/"
    assert client.post(url, {"comment": "  "}, format="json").status_code == 400
    assert api(people["ann2"]).post(url, {"comment": "mine?"}, format="json").status_code in (403, 404)
    made = client.post(url, {"comment": "Speaker labels are swapped."}, format="json")
    assert made.status_code == 201 and ItemFlag.objects.get().comment == "Speaker labels are swapped."
    flags = api(people["trainer"]).get(f"/api/v1/campaigns/{campaign.pk}/flags/").json()["results"]
    assert [(f["author"], f["comment"]) for f in flags] == [("ann1", "Speaker labels are swapped.")]
    assert api(people["ann2"]).get(f"/api/v1/campaigns/{campaign.pk}/flags/").status_code == 403
    assert Event.objects.filter(kind="item_flagged", reason="Speaker labels are swapped.").exists()


def test_round_two_shows_the_rejection_reason_and_the_override_reason_is_kept(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, qc_sample_size=2)
    label_all(campaign, people["ann1"])
    batch = campaign.batches.get()
    send_back(batch, people, "Score 2 needs proactivity; reread rule 3.", handed_in_by="ann1")
    lease = api(people["ann1"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["assignment"]
    assert lease["round"] == 2 and lease["qc_feedback"]["reason"] == "Score 2 needs proactivity; reread rule 3."
    assert lease["progress"]["left_for_you"] == 8
    label_all(campaign, people["ann1"])
    actions.hand_in_batch(batch, actor=people["ann1"])
    actions.start_review(batch, actor=people["qc"])
    for entry in batch.reviews.get(round=2).sample.all():
        actions.record_qc_label(batch, actor=people["qc"], batch_item_id=entry.batch_item_id, value=1)
    actions.accept_batch(batch, actor=people["qc"], reason="Close enough for this batch.",
                         override_reason="Client deadline.")
    event = Event.objects.get(batch=batch, kind="accepted")
    assert "Close enough for this batch." in event.reason and "Client deadline." in event.reason


def test_a_blind_qc_sees_each_final_label_only_after_giving_theirs(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad, qc_sample_size=2, qc_blind=True)
    label_all(campaign, people["ann1"])
    batch = campaign.batches.get()
    actions.hand_in_batch(batch, actor=people["ann1"])
    actions.start_review(batch, actor=people["qc"])
    qc = api(people["qc"])
    sample = qc.get(f"/api/v1/batches/{batch.pk}/qc_sample/").json()
    assert sample["blind"] and [e["annotator_value"] for e in sample["sample"]] == [None, None]
    items = qc.get(f"/api/v1/batches/{batch.pk}/items/").json()["results"]
    assert {row["final_value"] for row in items} == {None}
    first = sample["sample"][0]["batch_item"]
    after = qc.post(f"/api/v1/batches/{batch.pk}/qc_label/", {"batch_item": first, "value": 2}, format="json").json()
    assert [e["annotator_value"] for e in after["sample"]] == [2, None]
    managed = api(people["manager"]).get(f"/api/v1/batches/{batch.pk}/qc_sample/").json()
    assert not managed["blind"] and [e["annotator_value"] for e in managed["sample"]] == [2, 2]


def test_the_expert_reads_each_raters_whole_answer_and_a_gold_panel_votes_blind(staff, people, diqad):
    for protocol, blind in (("production", False), ("gold_panel", True)):
        roles = {"ann1": "expert" if blind else "annotator", "ann2": "expert" if blind else "annotator",
                 "expert": "expert", "trainer": "trainer"}
        campaign = make_campaign(staff, people, diqad, protocol=protocol, roles=roles, overlap=2, batch_size=1,
                                 qc_sample_size=1, seed=1, disagreement_policy="adjudicate")
        actions.cut_batches(campaign, actor=staff)
        for name, score in (("ann1", 1), ("ann2", 0)):
            lease = actions.lease_next_item(campaign, annotator=people[name])
            submit_score(lease.assignment, people[name], score)
            actions.flag_item(lease.assignment, actor=people[name], comment=f"a note on score {score}")
        disagreement = Disagreement.objects.get(campaign=campaign)
        body = api(people["expert"]).get(f"/api/v1/disagreements/{disagreement.pk}/answers/").json()
        # A gold panel's voters read no one's answers and no names; elsewhere the expert reads everything.
        assert [a["answers"] for a in body["answers"]] == ([] if blind else [DIQAD_ANSWERS[1], DIQAD_ANSWERS[0]])
        names = [a["annotator"] for a in body["answers"]] + [f["author"] for f in body["flags"]]
        assert names == (["Rater 1", "Rater 2"] if blind else ["ann1", "ann2", "ann1", "ann2"])
        assert ("ann1" in str(body)) is not blind


def test_guidelines_are_rendered_with_raw_html_escaped():
    html = render_guidelines("# Rules\n\n**Score 2** <script>alert(1)</script> [x](javascript:alert(1))\n\n"
                             "<img src=x onerror=alert(1)>")
    assert "<h1>Rules</h1>" in html and "<strong>Score 2</strong>" in html
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html


def test_submitting_an_item_twice_says_it_was_already_submitted(staff, people, diqad):
    campaign = campaign_of(staff, people, diqad)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"])
    client = api(people["ann1"])
    url = f"/api/v1/assignments/{lease.assignment.pk}/submit/"
    submitted = client.post(url, {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]}, format="json")
    assert submitted.status_code == 201
    again = client.post(url, {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[1]}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "already_submitted"


def test_a_labellers_progress_counts_the_items_with_all_their_labels_of_this_round(staff, people, diqad):
    from annotation.selectors import worker_progress

    campaign = campaign_of(staff, people, diqad, overlap=2, qc_sample_size=2)
    batch = campaign.batches.get()
    both = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    submit_score(both, people["ann1"], 2)
    submit_score(actions.lease_next_item(campaign, annotator=people["ann2"]).assignment, people["ann2"], 1)
    # ann2's lease is the second slot of ann1's item; ann1's next is a new item, labelled by one person only.
    submit_score(actions.lease_next_item(campaign, annotator=people["ann1"]).assignment, people["ann1"], 2)
    ann1, ann2 = worker_progress(batch, people["ann1"]), worker_progress(batch, people["ann2"])
    assert (ann1["total"], ann1["done"], ann1["left"], ann1["mine"], ann1["round"]) == (8, 1, 7, 2, 1)
    assert (ann2["done"], ann2["mine"]) == (1, 1)
    for user in ("ann1", "ann2"):
        label_all(campaign, people[user])
    assert (worker_progress(batch, people["ann1"])["done"], worker_progress(batch, people["ann1"])["mine"]) == (8, 8)
    # The first item's labels differ (2 and 1): done counted it all the same, as the counts carry no outcomes.
    actions.resolve_disagreement(Disagreement.objects.get(), actor=people["expert"], value=2)
    send_back(batch, people, "reread rule 3", handed_in_by="ann1", qc_value=0)
    # Round 2 starts from nothing: round 1's labels are kept but count no more.
    submit_score(actions.lease_next_item(campaign, annotator=people["ann2"]).assignment, people["ann2"], 2)
    again = worker_progress(batch, people["ann2"])
    assert (again["round"], again["total"], again["done"], again["mine"]) == (2, 8, 0, 1)
