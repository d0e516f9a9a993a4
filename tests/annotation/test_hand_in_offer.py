"""A batch is offered for hand-in only when it can be handed in, and home counts only the items this person can
take (issue 29, defect 6)."""
import pytest

from annotation import actions, selectors
from annotation.models import Disagreement
from annotation.policy import access_of
from core.errors import ActionError, Code

from .conftest import make_campaign, submit_score

pytestmark = pytest.mark.django_db


def campaign_of(staff, people, diqad, **settings):
    values = {"overlap": 2, "batch_size": 8, "qc_sample_size": 8, "seed": 1, "disagreement_policy": "adjudicate",
              **settings}
    campaign = make_campaign(staff, people, diqad, **values)
    actions.cut_batches(campaign, actor=staff)
    return campaign


def label_all(campaign, user, score):
    """Score every item the person can take; the first item gets `score` - 1 so that peers differ on it."""
    first = True
    while lease := actions.lease_next_item(campaign, annotator=user):
        submit_score(lease.assignment, user, score - 1 if first and score else score)
        first = False


def test_the_labellers_progress_is_the_same_whether_their_labels_agreed(staff, people, diqad):
    """Issue 41, item 4 (it replaces issue 29's hand-in shown disabled with its reason, which told a labeller that
    a peer disagreed): every label in, the labeller sees "complete" and, where batches are handed in by hand, the
    hand-in offered, disagreement or not. The hand-in action still refuses a manager a batch without its final
    labels; a labeller's hand-in is kept until the last decision (test_hand_in_tells_nothing)."""
    campaign = campaign_of(staff, people, diqad)
    batch = campaign.batches.get()
    label_all(campaign, people["ann1"], 2)
    label_all(campaign, people["ann2"], 0)  # differs from ann1 on every item
    assert Disagreement.objects.filter(status="open").exists()
    progress = selectors.labeller_progress(batch.pk, people["ann1"], campaign.pk)
    assert progress["done"] == progress["total"] == 8  # every label is in
    assert progress["state"] == "complete" and progress["ready_to_hand_in"] is True
    assert "hand_in_blocked" not in progress
    with pytest.raises(ActionError) as refused:
        actions.hand_in_batch(batch, actor=people["manager"])
    assert refused.value.code == Code.NOT_COMPLETE
    for disagreement in Disagreement.objects.filter(status="open"):
        actions.resolve_disagreement(disagreement, actor=people["expert"], value=2)
    assert selectors.labeller_progress(batch.pk, people["ann1"], campaign.pk) == progress
    actions.hand_in_batch(batch, actor=people["ann1"])
    handed_in = selectors.labeller_progress(batch.pk, people["ann1"], campaign.pk)
    assert handed_in["state"] == "complete" and handed_in["ready_to_hand_in"] is False


def test_home_counts_only_the_items_this_person_can_take(client, staff, people, diqad):
    campaign = campaign_of(staff, people, diqad)
    label_all(campaign, people["ann1"], 2)
    # Every item still waits for a second label, which only someone else can give.
    assert selectors.waiting_for(access_of(people["ann1"], campaign))["to_label"] == 0
    assert selectors.waiting_for(access_of(people["ann2"], campaign))["to_label"] == 8
    # The count is the leasing rule's: the person is given nothing more.
    assert actions.lease_next_item(campaign, annotator=people["ann1"]) is None
    client.force_login(people["ann1"])
    page = client.get("/").content.decode()
    assert "0 items waiting for you" in page
    client.force_login(people["ann2"])
    assert "8 items waiting for you" in client.get("/").content.decode()
