"""Every role against every endpoint of the annotation API. The matrix is checked against the router, so
an endpoint added without an expectation fails here."""
import pytest
from django.db import transaction
from django.urls import reverse

from annotation import actions
from annotation.models import Annotation, BatchItem, Disagreement, Membership
from annotation.urls import router

from .conftest import api, make_campaign, submit_score

ROLES = ["anonymous", "outsider", "staff", "manager", "annotator", "qc", "expert", "trainer", "viewer"]
# One letter per role in ROLES order: Y allowed (and, for lists, sees the rows), n refused (401/403/404 or an
# empty list).
MATRIX = {
    ("campaign-list", "get"):                         "nnYYYYYYY",
    ("campaign-list", "post"):                        "nnYnnnnnn",
    ("campaign-detail", "get"):                       "nnYYYYYYY",
    ("campaign-settings-versions", "get"):            "nnYYYYYYY",
    ("campaign-settings-versions", "post"):           "nnYYnnnnn",
    ("campaign-cut-batches", "post"):                 "nnYYnnnnn",
    ("campaign-next-item", "post"):                   "nnnnYnnnn",
    ("campaign-progress", "get"):                     "nnYYnYYYY",
    ("campaign-disagreements-by-guideline", "get"):   "nnYYnnYYY",
    ("campaign-baseline", "get"):                     "nnYYnnYnY",
    ("campaign-create-gold-version", "post"):         "nnYYnnnnn",
    ("campaign-pin-gold", "post"):                    "nnYYnnnnn",
    ("gold-version-benchmark-gold", "post"):          "nnYnnnnnn",
    ("membership-list", "get"):                       "nnYYYYYYY",
    ("membership-list", "post"):                      "nnYYnnnnn",
    ("membership-detail", "get"):                     "nnYYYnnnn",
    ("membership-detail", "patch"):                   "nnYYnnnnn",
    ("batch-list", "get"):                            "nnYYnYYYY",
    ("batch-detail", "get"):                          "nnYYnYYYY",
    ("batch-events", "get"):                          "nnYYnYYYY",
    ("batch-items", "get"):                           "nnYYnYYYY",
    ("batch-qc-sample", "get"):                       "nnYYnYnYY",
    ("batch-qc-figures", "get"):                      "nnYYnYnYY",
    ("batch-hand-in", "post"):                        "nnYYYnnnn",
    ("batch-start-review", "post"):                   "nnnnnYnnn",
    ("batch-qc-label", "post"):                       "nnnnnYnnn",
    ("batch-accept", "post"):                         "nnnnnYnnn",
    ("batch-reject", "post"):                         "nnnnnYnnn",
    ("batch-reopen", "post"):                         "nnYYnnnnn",
    ("assignment-list", "get"):                       "nnYYYnnnn",
    ("assignment-detail", "get"):                     "nnYYYnnnn",
    ("assignment-submit", "post"):                    "nnnnYnnnn",
    ("assignment-release", "post"):                   "nnnnYnnnn",
    ("annotation-list", "get"):                       "nnYYYYYYY",
    ("annotation-detail", "get"):                     "nnYYYYYYY",
    ("disagreement-list", "get"):                     "nnYYnnYYY",
    ("disagreement-detail", "get"):                   "nnYYnnYYY",
    ("disagreement-resolve", "post"):                 "nnnnnnYYn",
    ("gold-version-list", "get"):                     "nnYYnnYnY",
    ("gold-version-detail", "get"):                   "nnYYnnYnY",
    ("gold-version-labels", "get"):                   "nnYYnnYnY",
    ("gold-version-freeze", "post"):                  "nnYYnnnnn",
    ("campaign-flags", "get"):                        "nnYYnnYYY",
    ("campaign-last-answer", "get"):                  "nnnnYnnnn",
    ("disagreement-answers", "get"):                  "nnYYnnYYY",
    ("assignment-flag", "post"):                      "nnnnYnnnn",
    ("annotation-amend", "post"):                     "nnnnYnnnn",
}
LISTS = {"campaign-list", "membership-list", "batch-list", "assignment-list", "annotation-list", "disagreement-list",
         "gold-version-list", "batch-events", "batch-items", "gold-version-labels",
         "campaign-disagreements-by-guideline", "campaign-settings-versions"}


def router_endpoints():
    # HEAD answers like GET; every other method needs its own row.
    return {(pattern.name, method)
            for pattern in router.urls for method in pattern.callback.actions if method != "head"}


def test_every_endpoint_has_an_expectation():
    assert router_endpoints() == set(MATRIX), "add the new endpoint to MATRIX with an expectation for every role"
    assert all(len(row) == len(ROLES) for row in MATRIX.values())


@pytest.fixture
def world(staff, people, diqad):
    """A production campaign: batch 1 labelled and handed in, batch 2 with a live lease of the annotator,
    one open disagreement, one gold version."""
    roles = {"manager": "manager", "ann1": "annotator", "qc": "qc", "expert": "expert", "trainer": "trainer",
             "viewer": "viewer"}
    campaign = make_campaign(staff, people, diqad, roles=roles, overlap=1, batch_size=4)
    first, second = actions.cut_batches(campaign, actor=staff)
    while (lease := actions.lease_next_item(campaign, annotator=people["ann1"])).assignment.batch_item.batch == first:
        submit_score(lease.assignment, people["ann1"], 2)
    actions.hand_in_batch(first, actor=people["ann1"])
    open_item = BatchItem.objects.filter(batch=second).exclude(pk=lease.assignment.batch_item_id).first()
    disagreement = Disagreement.objects.create(campaign=campaign, batch_item=open_item, round=1,
                                               settings=campaign.settings,
                                               labels=[{"annotator": "x", "value": 1}, {"annotator": "y", "value": 2}])
    gold = actions.create_gold_version(campaign, actor=staff, method="source")
    people = {**people, "staff": staff, "annotator": people["ann1"]}
    objects = {"campaign": campaign.pk, "membership": Membership.objects.get(campaign=campaign, user=people["ann1"]).pk,
               "batch": first.pk, "assignment": lease.assignment.pk, "annotation": Annotation.objects.first().pk,
               "disagreement": disagreement.pk, "gold-version": gold.pk}
    bodies = {"campaign-list": {"name": "x", "benchmark": diqad, "protocol": "production"},
              "membership-list": {"campaign": campaign.pk, "user": "outsider", "role": "viewer"},
              "membership-detail": {"active": True}, "assignment-flag": {"comment": "The options repeat."},
              "annotation-amend": {"answers": {"needs_verification": False, "score": 2}}}
    return people, objects, bodies


@pytest.mark.django_db
def test_role_matrix(world):
    """One world, every (endpoint, method, role) call in a rolled-back savepoint, all mismatches reported at once."""
    people, objects, bodies = world
    wrong = []
    for (endpoint, method), row in sorted(MATRIX.items()):
        kind = next(name for name in objects if endpoint.startswith(name + "-"))
        url = reverse(endpoint, kwargs={} if endpoint.endswith("-list") else {"pk": objects[kind]})
        for role, expected in zip(ROLES, row, strict=True):
            client = api(None if role == "anonymous" else people[role])
            with transaction.atomic():  # each role meets the same world
                body = bodies.get(endpoint, {}) if method != "get" else None
                response = getattr(client, method)(url, body, format="json")
                transaction.set_rollback(True)
            refused = response.status_code in (401, 403, 404)
            if refused and not {"code", "detail"} <= set(response.json()):
                wrong.append(f"{method.upper()} {url} {role}: refusal without code and detail: "
                             f"{response.content[:120]!r}")
            if not refused and endpoint in LISTS and method == "get":
                body = response.json()
                refused = not (body["results"] if isinstance(body, dict) and "results" in body else body)
            if refused != (expected == "n"):
                wrong.append(f"{method.upper()} {url} {role}: expected {'refused' if expected == 'n' else 'allowed'}, "
                             f"got {response.status_code} {response.content[:120]!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.django_db
def test_annotators_see_only_their_own_labels_and_no_gold(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, batch_size=8)
    actions.cut_batches(campaign, actor=staff)
    for name in ("ann1", "ann2"):
        lease = actions.lease_next_item(campaign, annotator=people[name])
        submit_score(lease.assignment, people[name], 1 if name == "ann2" else 2)
    mine = api(people["ann1"]).get("/api/v1/annotations/").json()
    assert mine["count"] == 1 and mine["results"][0]["annotator"] == "ann1"
    other = Annotation.objects.get(annotator=people["ann2"])
    assert api(people["ann1"]).get(f"/api/v1/annotations/{other.pk}/").status_code == 403
    lease = api(people["ann1"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").content.decode()
    assert "source_gold" not in lease and "ann2" not in lease
    # Gold through the items API: viewers, managers and experts of a campaign yes; annotators and QC read no
    # item there at all (only through their leases and samples).
    item = "/api/v1/items/?external_id=dq-001"
    assert "source_gold" in api(people["viewer"]).get(item).json()["results"][0]
    assert "source_gold" in api(people["expert"]).get(item).json()["results"][0]
    assert api(people["ann1"]).get(item).json()["results"] == []
    assert api(people["qc"]).get(item).json()["results"] == []


@pytest.mark.django_db
def test_gold_panel_experts_vote_blind(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, protocol="gold_panel", overlap=2, batch_size=8,
                             roles={"expert": "expert", "trainer": "expert"})
    actions.cut_batches(campaign, actor=staff)
    lease = actions.lease_next_item(campaign, annotator=people["trainer"])
    submit_score(lease.assignment, people["trainer"], 2)
    assert api(people["expert"]).get("/api/v1/annotations/", {"campaign": campaign.pk}).json()["count"] == 0
    assert api(people["expert"]).post(f"/api/v1/campaigns/{campaign.pk}/next/").json()["status"] == "leased"
