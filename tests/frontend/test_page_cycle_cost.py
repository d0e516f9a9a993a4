"""The annotation page's cycle against the API's: one `next` and one `submit` as frontend/static/frontend/js/
annotate.js sends them (signed in with the session cookie, the CSRF header on writes, the labeller's progress
with each submission), and as an API client sends them (a token, ?progress=0). Counted statement by statement
with Django's query capture: the page must not cost more than the API plus what it asks for on top."""
import os

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import actions, selectors
from tests.annotation.conftest import DIQAD_ANSWERS, diqad, make_campaign, people, sid, staff, submit_score  # noqa: F401

# What the page's cycle may send beyond the API's: per request, the session's row and the person's where a token
# is one statement (2 x 1), and the labeller's progress with the submission (one statement).
PAGE_EXTRA = 2 + 1
# The API's cycle at overlap 1 (every label its item's last): next 8, submit 9 (tests/annotation/
# test_cycle_statements.py names them). Pinned here too, so that a statement added to both sides fails as well.
API_CYCLE = 8 + 9

VERBOSE = os.environ.get("HB_SHOW_CYCLE_SQL") == "1"


def token_client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


class PageClient:
    """What the browser sends for the annotation page: the session cookie and, on writes, X-CSRFToken from the
    csrftoken cookie the page set (CSRF checks enforced, as in production)."""

    def __init__(self, user, campaign):
        self.client = Client(enforce_csrf_checks=True)
        self.client.force_login(user)
        assert self.client.get(f"/campaigns/{campaign.pk}/annotate/").status_code == 200
        self.csrf = self.client.cookies["csrftoken"].value

    def post(self, path, body=None):
        return self.client.post(path, body or {}, content_type="application/json", HTTP_X_CSRFTOKEN=self.csrf,
                                HTTP_ACCEPT="application/json")


def counted(call):
    with CaptureQueriesContext(connection) as queries:
        response = call()
    sql = [q["sql"] for q in queries.captured_queries]
    if VERBOSE:
        print(f"--- {len(sql)} statements")
        print("\n".join(str(s)[:200] for s in sql))
    return response, sql


def api_cycle(client, campaign):
    lease = client.post(f"/api/v1/campaigns/{campaign.pk}/next/?progress=0")
    assert lease.status_code == 200, lease.content
    lease_id = lease.json()["assignment"]["id"]
    done = client.post(f"/api/v1/assignments/{lease_id}/submit/?progress=0",
                       {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]}, format="json")
    assert done.status_code == 201, done.content


def page_cycle(page, campaign):
    lease = page.post(f"/api/v1/campaigns/{campaign.pk}/next/?progress=0")
    assert lease.status_code == 200, lease.content
    lease_id = lease.json()["assignment"]["id"]
    done = page.post(f"/api/v1/assignments/{lease_id}/submit/",
                     {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]})
    assert done.status_code == 201, done.content
    assert done.json()["progress"]["mine"] >= 1


@pytest.mark.django_db(transaction=True)
def test_the_page_cycle_costs_the_api_cycle_plus_its_progress(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=1, min_reading_seconds=0, batch_size=20)
    actions.cut_batches(campaign, actor=people["manager"])
    api = token_client(people["ann1"])
    page = PageClient(people["ann2"], campaign)
    # The first lease of each starts the batch and the page's first call shows the batch's progress:
    # once-per-batch costs, not the cycle's.
    api_cycle(api, campaign)
    shown = page.post(f"/api/v1/campaigns/{campaign.pk}/next/")
    assert "progress" in shown.json()["assignment"]
    page.post(f"/api/v1/assignments/{shown.json()['assignment']['id']}/submit/",
              {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]})
    counts = {"api": [], "page": []}
    for _ in range(3):
        for side, cycle in (("api", lambda: api_cycle(api, campaign)), ("page", lambda: page_cycle(page, campaign))):
            _, sql = counted(cycle)
            counts[side].append(len(sql))
    print(counts)
    # Measured (overlap 1, so every label is its item's last): api 17 a cycle (next 8, submit 9); the page 22 on
    # the code before (the session's row and the person's per request where a token is one statement, and the
    # progress in three), 20 now (the progress in one).
    for api_count, page_count in zip(counts["api"], counts["page"], strict=False):
        assert api_count <= API_CYCLE, counts
        assert page_count <= api_count + PAGE_EXTRA, counts


@pytest.mark.django_db
def test_the_labellers_progress_counts_as_its_parts(staff, people, diqad):
    """labeller_progress in one statement gives what worker_progress and left_for give apart, as the batch
    fills, with a live lease, and for someone with nothing left."""
    campaign = make_campaign(staff, people, diqad, overlap=2, min_reading_seconds=0, batch_size=4)
    batch = actions.cut_batches(campaign, actor=people["manager"])[0]

    def same(user):
        whole = selectors.labeller_progress(batch.pk, user, campaign.pk)
        assert whole == {**selectors.worker_progress(batch, user), "left_for_you": selectors.left_for(campaign, user)}
        return whole

    assert same(people["ann1"])["done"] == 0
    for _ in range(3):
        for who in ("ann1", "ann2"):
            lease = actions.lease_next_item(campaign, annotator=people[who]).assignment
            assert same(people[who])["left_for_you"] >= 1
            submit_score(lease, people[who], 2)
            same(people[who])
    progress = same(people["ann1"])
    assert (progress["done"], progress["mine"], progress["total"]) == (3, 3, 4)
    assert same(people["manager"])["mine"] == 0
