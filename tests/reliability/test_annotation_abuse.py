"""Annotators cannot predict the QC sample, cannot store answers outside the form, cannot hold two
leases or submit on an expired one (issue 18, findings 4, 6 and 10)."""
import contextlib
import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection

from annotation import actions
from annotation import qc as qc_module
from annotation.actions import batches as batch_actions
from annotation.actions import leases as lease_actions
from annotation.models import Annotation, Assignment, QCReview
from annotation.serializers import QCReviewSerializer
from benchmarks.formschema import validate_answers
from benchmarks.models import Task
from core.errors import ActionError
from tests.annotation.conftest import api, diqad, make_campaign, people, sid, staff, submit_score  # noqa: F401


def production(staff, people, benchmark, **settings):
    values = {"overlap": 1, "batch_size": 8, "qc_sample_size": 3, "min_reading_seconds": 0, "seed": 7, **settings}
    campaign = make_campaign(staff, people, benchmark, **values)
    actions.cut_batches(campaign, actor=staff)
    return campaign


def label_all(campaign, annotator):
    while lease := actions.lease_next_item(campaign, annotator=annotator):
        submit_score(lease.assignment, annotator, 2)


# ---------------------------------------------------------------- finding 4: the QC sample

def test_qc_sample_cannot_be_predicted_from_what_annotators_see(staff, people, diqad, monkeypatch):
    # Patched where the hand-in looks it up (annotation/actions/batches.py).
    monkeypatch.setattr(batch_actions, "new_sample_secret", lambda: "a-secret-the-annotators-never-see")
    campaign = production(staff, people, diqad)
    annotator = people["ann1"]
    label_all(campaign, annotator)
    batch = campaign.batches.get()
    candidates = list(batch.items.values_list("pk", "final_value"))
    # What an annotator could compute before labelling: the campaign seed, the sample size, the batch id.
    predicted = qc_module.draw_sample(candidates, 3, f"7:{batch.pk}:{batch.round}")
    review = actions.hand_in_batch(batch, actor=annotator)
    drawn = list(review.sample.order_by("position").values_list("batch_item_id", flat=True))
    assert len(drawn) == 3 and drawn != predicted
    assert review.sample_secret == "a-secret-the-annotators-never-see"
    # The secret is in no answer the API gives, to the annotator or to the QC.
    assert "never-see" not in str(QCReviewSerializer(review).data)
    for user in (annotator, people["qc"]):
        for url in (f"/api/v1/batches/{batch.pk}/", f"/api/v1/batches/{batch.pk}/qc_sample/",
                    f"/api/v1/campaigns/{campaign.pk}/"):
            assert "never-see" not in api(user).get(url).content.decode()


def test_each_hand_in_draws_a_fresh_secret(staff, people, diqad):
    campaign = production(staff, people, diqad)
    label_all(campaign, people["ann1"])
    review = actions.hand_in_batch(campaign.batches.get(), actor=people["ann1"])
    assert len(review.sample_secret) >= 32 and review.sample_secret != qc_module.new_sample_secret()


def test_audit_redraws_the_stored_sample(staff, people, diqad):
    from annotation.audit import redraw_qc_sample

    campaign = production(staff, people, diqad)
    label_all(campaign, people["ann1"])
    review = actions.hand_in_batch(campaign.batches.get(), actor=people["ann1"])
    stored = list(review.sample.order_by("position").values_list("batch_item_id", flat=True))
    assert redraw_qc_sample(review) == stored
    out = StringIO()
    call_command("audit_qc_sample", str(review.pk), stdout=out)
    assert "matches" in out.getvalue() and str(stored) in out.getvalue()
    # A tampered sample is reported as not matching, with a non-zero exit. Three of eight items: about one secret
    # in 56 draws the same sample, so the tampered secret is one that draws another.
    for n in range(100):
        review.sample_secret = f"tampered-{n}"
        if redraw_qc_sample(review) != stored:
            break
    QCReview.objects.filter(pk=review.pk).update(sample_secret=review.sample_secret)
    with pytest.raises(SystemExit):
        call_command("audit_qc_sample", str(review.pk), stdout=StringIO(), stderr=StringIO())


# ---------------------------------------------------------------- finding 6: strict answers

@pytest.mark.parametrize("answers", [
    {"needs_verification": False, "score": True},
    {"needs_verification": False, "score": 2.0},
    {"needs_verification": False, "score": 1.0, "reasons_1": ["incomplete"]},
    {"needs_verification": False, "score": False, "reasons_0": ["not_relevant"]},
    {"needs_verification": False, "score": "2"},
], ids=["true", "2.0", "1.0", "false", "string"])
def test_answers_of_another_type_are_refused(staff, people, diqad, answers):
    campaign = production(staff, people, diqad)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"])
    with pytest.raises(ActionError) as refused:
        actions.submit_annotation(lease.assignment, annotator=people["ann1"], answers=answers,
                                  client_submission_id=sid())
    assert refused.value.code == "invalid_answers" and "score" in refused.value.extra["errors"]
    assert not Annotation.objects.exists()


def test_form_validation_compares_with_types(diqad):
    form = Task.objects.get(benchmark__slug=diqad).form
    for answers in ({"needs_verification": 0, "score": 2},
                    {"needs_verification": False, "score": True, "reasons_1": ["incomplete"]},
                    {"needs_verification": False, "score": 2.0}):
        with pytest.raises(ValidationError):
            validate_answers(form, answers)
    assert validate_answers(form, {"needs_verification": False, "score": 2}) == set()


# ---------------------------------------------------------------- finding 10: leases

def test_a_submit_after_the_lease_expired_is_refused_clearly(staff, people, diqad):
    campaign = production(staff, people, diqad, lease_minutes=1)
    lease = actions.lease_next_item(campaign, annotator=people["ann1"]).assignment
    late = lease.expires_at + timedelta(seconds=2)
    with pytest.raises(ActionError) as refused:
        actions.submit_annotation(lease, annotator=people["ann1"], answers={"needs_verification": False, "score": 2},
                                  client_submission_id=sid(), now=late)
    error = refused.value
    assert error.code == "lease_expired" and error.extra["seconds_late"] == 2
    assert "2 s" in error.detail and "not saved" in error.detail
    assert not Annotation.objects.exists()
    # Through the API: the same code, and the next item is there to be taken.
    Assignment.objects.filter(pk=lease.pk).update(served_at=lease.served_at - timedelta(minutes=2),
                                                  expires_at=lease.served_at - timedelta(minutes=1))
    answer = api(people["ann1"]).post(f"/api/v1/assignments/{lease.pk}/submit/", {
        "answers": {"needs_verification": False, "score": 2}, "client_submission_id": sid()}, format="json")
    assert answer.status_code == 409 and answer.json()["code"] == "lease_expired"
    assert actions.lease_next_item(campaign, annotator=people["ann1"]).assignment.pk != lease.pk


@pytest.mark.django_db(transaction=True)
def test_parallel_next_calls_give_one_live_lease(monkeypatch):
    from django.contrib.auth.models import User

    from benchmarks.actions import import_items
    from tests.conftest import DEMO_DATA

    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")
    boss = User.objects.create_user("boss", is_staff=True)
    ann = User.objects.create_user("ann1")
    campaign = production(boss, {"ann1": ann}, "diqad-demo", roles={"ann1": "annotator"}, overlap=2)
    real_lock_free_batch_item = lease_actions._lock_free_batch_item
    both_looked = threading.Barrier(2, timeout=3)

    def look_then_wait(*args, **kwargs):
        # Called once a request has seen "no live lease" and before it leases.
        # Both requests have seen "no live lease" before either leases; a broken barrier: the other request is
        # held back (by a lock) until this one is done.
        with contextlib.suppress(threading.BrokenBarrierError):
            both_looked.wait()
        return real_lock_free_batch_item(*args, **kwargs)

    monkeypatch.setattr(lease_actions, "_lock_free_batch_item", look_then_wait)  # where _lease_next_item looks it up
    leases, failures = [], []

    def take():
        try:
            leases.append(actions.lease_next_item(campaign, annotator=ann).assignment.pk)
        except Exception as error:  # noqa: BLE001
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=take) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    assert Assignment.objects.filter(annotator=ann, status="leased").count() == 1
    assert len(set(leases)) == 1
