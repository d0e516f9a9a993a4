"""Nothing a labeller sees depends on a peer's label, the hand-in included (issue 41, item 4): in a campaign that
hands batches in by hand, a labeller who hands in a batch whose labels are all in, while one of its items still
waits for an expert's decision, is answered as when the batch went on at once, byte for byte once ids and times
are set aside; the request is kept and the batch is handed in when the last decision arrives. A manager is still
told the truth."""
import json
import re

import pytest

from annotation import actions, selectors
from annotation.actions._common import HANDED_IN_AS_REQUESTED
from annotation.models import Annotation, BatchState, Disagreement, EventKind

from .conftest import DIQAD_ANSWERS, api
from .test_submit_tells_nothing import VARYING, last_label_answer

pytestmark = pytest.mark.django_db

TIMES = re.compile(r'"(updated_at|created_at)": "[^"]*"')


def masked(response):
    return response.status_code, TIMES.sub(r'"\1": X', VARYING.sub(r'"\1": X', json.dumps(response.json(),
                                                                                      sort_keys=True)))


def hand_in(staff, people, diqad, agree):
    """ann1's last label agrees with ann2's or not; then ann1 hands the batch in: the answer, ids and times masked."""
    _, campaign = last_label_answer(staff, people, diqad, agree)
    batch = Annotation.objects.get(campaign=campaign, annotator=people["ann1"]).batch_item.batch
    return masked(api(people["ann1"]).post(f"/api/v1/batches/{batch.pk}/hand_in/")), campaign, batch


def test_the_labellers_hand_in_answer_does_not_say_whether_a_disagreement_is_open(staff, people, diqad):
    agreed, _, agreed_batch = hand_in(staff, people, diqad, True)
    differed, campaign, batch = hand_in(staff, people, diqad, False)
    disagreement = Disagreement.objects.get(batch_item__campaign=campaign)
    assert agreed == differed, (agreed, differed)
    assert agreed[0] == 200 and '"state": "handed_in"' in agreed[1] and "disagreement" not in agreed[1]
    agreed_batch.refresh_from_db()
    batch.refresh_from_db()
    assert agreed_batch.state == BatchState.HANDED_IN
    assert batch.state == BatchState.ANNOTATING and actions.hand_in_requested(batch)

    # The page's progress afterwards: the same, and no second offer to hand in.
    after = [selectors.labeller_progress(b, people["ann1"], b.campaign_id) for b in (agreed_batch, batch)]
    for progress in after:
        progress.pop("batch_id")
    assert after[0] == after[1] and after[0]["ready_to_hand_in"] is False
    assert after[0]["state"] == after[1]["state"] == "complete"

    # Asked again: the same answer again, and one request only.
    client = api(people["ann1"])
    again = [masked(client.post(f"/api/v1/batches/{b.pk}/hand_in/")) for b in (agreed_batch, batch)]
    assert again[0] == again[1] == agreed
    assert batch.events.filter(kind=EventKind.HAND_IN_REQUESTED).count() == 1

    # No change to a label once handed in, told alike.
    own = batch.items.get().annotations.get(annotator=people["ann1"])
    agreed_own = agreed_batch.items.get().annotations.get(annotator=people["ann1"])
    amended = [masked(client.post(f"/api/v1/annotations/{a.pk}/amend/", {"answers": DIQAD_ANSWERS[1]}, format="json"))
               for a in (agreed_own, own)]
    assert amended[0] == amended[1] and amended[0][0] == 409

    # The manager is told the truth, and sees the request waiting.
    manager = api(people["manager"])
    refused = manager.post(f"/api/v1/batches/{batch.pk}/hand_in/")
    assert refused.status_code == 409 and refused.json()["disagreements"] == 1
    manager.force_login(people["manager"])
    page = manager.get(f"/manage/campaigns/{campaign.pk}/").content.decode()
    assert "hand-in requested by ann1, waiting for 1 decision" in page

    # The expert decides: the batch is handed in, through the hand-in action, as the labeller asked.
    resolved = api(people["expert"]).post(f"/api/v1/disagreements/{disagreement.pk}/resolve/", {"value": 2},
                                          format="json")
    assert resolved.status_code == 200, resolved.content
    batch.refresh_from_db()
    assert batch.state == BatchState.HANDED_IN and batch.reviews.count() == 1
    handed = batch.events.get(kind=EventKind.HANDED_IN)
    assert handed.reason == HANDED_IN_AS_REQUESTED and handed.actor == people["expert"]
    assert "hand-in requested" not in manager.get(f"/manage/campaigns/{campaign.pk}/").content.decode()


def test_a_request_does_not_outlive_its_round(staff, people, diqad):
    """Rejected in QC, the batch is annotated again: the request of the earlier round hands nothing in."""
    _, campaign, batch = hand_in(staff, people, diqad, False)
    disagreement = Disagreement.objects.get(batch_item__campaign=campaign)
    actions.resolve_disagreement(disagreement, actor=people["expert"], value=2)
    batch.refresh_from_db()
    actions.start_review(batch, actor=people["qc"])
    actions.reject_batch(batch, actor=people["qc"], reason="read the guidelines again")
    batch.refresh_from_db()
    assert (batch.state, batch.round) == (BatchState.ANNOTATING, 2)
    assert not actions.hand_in_requested(batch)
    assert not selectors.hand_in_requests(campaign)
    assert actions.auto_hand_in(batch.pk, actor=people["expert"]) is None
