"""Nothing a labeller sees depends on a peer's label: the answer to the submission of a batch's last label is the
same, byte for byte once the ids are set aside, whether it agreed with the peer's or not; so is the progress the
page asks for afterwards (issue 41, item 4)."""
import json
import re

import pytest

from annotation import actions
from annotation.models import Disagreement

from .conftest import DIQAD_ANSWERS, api, make_campaign, sid

pytestmark = pytest.mark.django_db

VARYING = re.compile(r'"(id|batch_id|batch_item|assignment|item|annotation|external_id|created_at|submitted_at|'
                     r'client_submission_id|dwell_seconds|served_at|expires_at|campaign)": ("[^"]*"|\d+(\.\d+)?)')


def last_label_answer(staff, people, diqad, agree, **settings):
    """ann2 labels the one-item batch; ann1's last label agrees with it or not: ann1's submit answer, ids masked."""
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=1, qc_sample_size=1, seed=1,
                             disagreement_policy="adjudicate", min_reading_seconds=0, **settings)
    actions.cut_batches(campaign, actor=staff)
    lease = actions.lease_next_item(campaign, annotator=people["ann2"])
    actions.submit_annotation(lease.assignment, annotator=people["ann2"], client_submission_id=sid(),
                              answers=DIQAD_ANSWERS[2])
    client = api(people["ann1"])
    leased = client.post(f"/api/v1/campaigns/{campaign.pk}/next/", format="json")
    assert leased.status_code == 200, leased.content
    assignment = leased.json()["assignment"]["id"]
    submitted = client.post(f"/api/v1/assignments/{assignment}/submit/", {"answers": DIQAD_ANSWERS[2 if agree else 0],
                            "client_submission_id": sid()}, format="json")
    assert submitted.status_code in (200, 201), submitted.content
    body = submitted.json()
    body.pop("annotation", None)  # the person's own label, which differs by what they chose
    return VARYING.sub(r'"\1": X', json.dumps(body, sort_keys=True)), campaign


@pytest.mark.parametrize("auto_hand_in", [True, False])
def test_the_last_labels_answer_does_not_say_whether_it_agreed(staff, people, diqad, auto_hand_in):
    agreed, _ = last_label_answer(staff, people, diqad, True, auto_hand_in=auto_hand_in)
    differed, campaign = last_label_answer(staff, people, diqad, False, auto_hand_in=auto_hand_in)
    assert Disagreement.objects.filter(batch_item__campaign=campaign).exists()
    assert agreed == differed, (agreed, differed)
    assert '"state": "complete"' in agreed and "hand_in_blocked" not in agreed
