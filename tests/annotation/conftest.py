import uuid

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation import actions
from benchmarks.actions import import_items
from tests.conftest import DEMO_DATA


def api(user=None):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def sid():
    return str(uuid.uuid4())


@pytest.fixture
def staff(db):
    return User.objects.create_user("boss", is_staff=True)


@pytest.fixture
def people(db):
    """One user per role, plus one with no role at all."""
    return {name: User.objects.create_user(name) for name in
            ("manager", "ann1", "ann2", "ann3", "qc", "expert", "trainer", "viewer", "outsider")}


@pytest.fixture
def diqad(db):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")
    return "diqad-demo"


@pytest.fixture
def dialogbench(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    return "db-demo"


ROLE_OF = {"manager": "manager", "ann1": "annotator", "ann2": "annotator", "ann3": "annotator", "qc": "qc",
           "expert": "expert", "trainer": "trainer", "viewer": "viewer"}


def make_campaign(staff, people, benchmark, protocol="production", roles=ROLE_OF, **settings):
    # Tests hand batches in themselves unless they ask for the automatic hand-in.
    settings.setdefault("auto_hand_in", False)
    campaign = actions.create_campaign(actor=staff, name=f"{benchmark} {protocol}", benchmark=benchmark,
                                       protocol=protocol, settings=settings)
    for name, role in roles.items():
        actions.add_member(campaign, actor=staff, user=people[name], role=role)
    return campaign


DIQAD_ANSWERS = {
    2: {"needs_verification": False, "score": 2},
    1: {"needs_verification": False, "score": 1, "reasons_1": ["incomplete"]},
    0: {"needs_verification": True, "score": 0, "reasons_0": ["not_relevant"]},
    -1: {"needs_verification": False, "score": -1},
}


def submit_score(assignment, user, score):
    """Submit the DiQAD answers for `score` on a lease, straight through the action."""
    return actions.submit_annotation(assignment, annotator=user, answers=DIQAD_ANSWERS[score],
                                     client_submission_id=sid())


def send_back(batch, people, reason, *, handed_in_by="manager", qc_value=1):
    """The batch handed in, its QC sample labelled `qc_value` by people["qc"], and sent back with `reason`."""
    actions.hand_in_batch(batch, actor=people[handed_in_by])
    actions.start_review(batch, actor=people["qc"])
    for entry in batch.reviews.get(round=batch.round).sample.all():
        actions.record_qc_label(batch, actor=people["qc"], batch_item_id=entry.batch_item_id, value=qc_value)
    actions.reject_batch(batch, actor=people["qc"], reason=reason)
