"""A preset's roles and steps are the protocol's (issue 29, defect 5): people added as Experts label the items of the
DialogBench 3-expert preset, blind to each other, and a finished batch goes to the protocol's next step (the
experts' majority, made into the baseline and gold), never to a QC that the protocol does not have."""
import pytest

from annotation import actions, policy, selectors
from annotation.models import Annotation, BatchState, Event, QCReview, Role
from annotation.presets import PRESETS
from core.errors import ActionError, Code

from .conftest import api, sid

pytestmark = pytest.mark.django_db

EXPERTS = ("ann1", "ann2", "ann3")  # people of the fixture, added here as Experts


def dialogbench_campaign(staff, people, dialogbench):
    preset = PRESETS["dialogbench-baseline"]
    settings = {**preset.settings, "items_per_task": 1, "seed": 3}
    campaign = actions.create_campaign(actor=staff, name="DialogBench experts", benchmark=dialogbench,
                                       protocol=preset.protocol, settings=settings, worker_role=preset.worker_role)
    for name in EXPERTS:
        actions.add_member(campaign, actor=staff, user=people[name], role=Role.EXPERT)
    actions.add_member(campaign, actor=staff, user=people["viewer"], role=Role.VIEWER)
    actions.add_member(campaign, actor=staff, user=people["outsider"], role=Role.ANNOTATOR)
    actions.cut_batches(campaign, actor=staff)
    return campaign


def test_people_added_as_experts_label_the_dialogbench_preset_and_the_batch_skips_qc(staff, people, dialogbench):
    campaign = dialogbench_campaign(staff, people, dialogbench)
    assert campaign.worker_role == Role.EXPERT and not campaign.has_qc
    batch = campaign.batches.get()
    n_items = batch.items.count()
    for name in EXPERTS:
        client = api(people[name])
        while (body := client.post(f"/api/v1/campaigns/{campaign.pk}/next/").json())["status"] != "no_work":
            lease = body["assignment"]
            answer = "A" if name != "ann2" else "B"
            sent = client.post(f"/api/v1/assignments/{lease['id']}/submit/",
                               {"client_submission_id": sid(), "answers": {"answer": answer}}, format="json")
            assert sent.status_code == 201, sent.json()
            # Experts who label work blind: nobody's labels but their own.
            assert policy.access_of(people[name], campaign).votes_blind
            seen = client.get(f"/api/v1/annotations/?batch={batch.pk}").json()
            assert {row["annotator"] for row in seen.get("results", [])} <= {name}
    assert Annotation.objects.filter(campaign=campaign).count() == 3 * n_items
    batch.refresh_from_db()
    # The last final label completed the batch: no QC sample, no hand-in to QC.
    assert batch.state == BatchState.ACCEPTED
    assert not QCReview.objects.filter(batch=batch).exists()
    kinds = list(Event.objects.filter(batch=batch).values_list("kind", flat=True))
    assert "completed" in kinds and "handed_in" not in kinds
    assert set(batch.items.values_list("final_value", flat=True)) == {"A"}  # 2 of 3 experts
    # The protocol's next step: the experts' majority as gold, and the baseline from their labels.
    version = actions.create_gold_version(campaign, actor=staff)
    assert version.labels.count() == n_items and not version.left_out
    assert selectors.baseline_scores(campaign)["tasks"]


def test_an_annotator_is_refused_with_the_role_that_labels_in_words(staff, people, dialogbench):
    campaign = dialogbench_campaign(staff, people, dialogbench)
    with pytest.raises(ActionError) as refused:
        actions.lease_next_item(campaign, annotator=people["outsider"])
    assert refused.value.code == Code.FORBIDDEN
    assert refused.value.detail == "Only an expert of this campaign may take items."


def test_refusals_say_an_before_a_vowel():
    assert policy.refusal({"annotator"}, "label its items") == "Only an annotator of this campaign may label its items."
    assert policy.refusal({"expert", "manager"}, "hand in a batch") == (
        "Only an expert or a manager of this campaign may hand in a batch.")


def test_a_production_batch_still_goes_to_qc(staff, people, diqad):
    from .conftest import make_campaign, submit_score

    campaign = make_campaign(staff, people, diqad, overlap=1, batch_size=8, qc_sample_size=2, auto_hand_in=True)
    assert campaign.worker_role == Role.ANNOTATOR and campaign.has_qc
    actions.cut_batches(campaign, actor=staff)
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    batch = campaign.batches.get()
    assert batch.state == BatchState.HANDED_IN and QCReview.objects.filter(batch=batch).exists()
