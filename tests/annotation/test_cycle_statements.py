"""The annotator cycle's SQL budget: one `next` and one `submit` through the API, counted statement by
statement with Django's query capture. The budgets are stated here and in docs/api.md;
perf/annotator_load.py measures what they cost in time."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import actions
from annotation.models import Annotation, Assignment, BatchItem

from .conftest import DIQAD_ANSWERS, make_campaign, sid

# Statements of one request as the database sees them, authentication (the token's row) and the transaction's
# BEGIN and COMMIT included, as a client that does not show progress asks (?progress=0):
# token, BEGIN, membership lock (the role, the campaign's protocol), live lease and first batch, item lock,
# lease insert, taken + 1, COMMIT (the campaign is read again only when the lock refuses)
NEXT_BUDGET = 8
# token, BEGIN, item lock with the lease (and the role), lease closed, label insert, the round's labels, COMMIT;
# on the item's last label also its outcome and the automatic hand-in check (the lease is looked up as
# get_object does only on a refusal)
SUBMIT_BUDGET = 9
# The labeller's progress (what the annotation page shows after each item) costs this much on top: the batch's
# header with your labels, its items' counts, the items left for you.
PROGRESS_BUDGET = 3


def token_client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def counted(call):
    with CaptureQueriesContext(connection) as queries:
        response = call()
    return response, [q["sql"] for q in queries.captured_queries]


# transaction=True: a request's transaction is the real one, not a savepoint inside the test's.
@pytest.mark.django_db(transaction=True)
def test_next_and_submit_stay_within_their_statement_budget(staff, people, diqad):
    campaign = make_campaign(staff, people, diqad, overlap=2, min_reading_seconds=0, batch_size=8,
                             auto_hand_in=True)
    actions.cut_batches(campaign, actor=people["manager"])
    ann1, ann2 = token_client(people["ann1"]), token_client(people["ann2"])
    # The first lease starts the batch (a once-per-batch cost, not the cycle's).
    first = ann2.post(f"/api/v1/campaigns/{campaign.pk}/next/?progress=0").json()["assignment"]

    leased, next_sql = counted(lambda: ann1.post(f"/api/v1/campaigns/{campaign.pk}/next/?progress=0"))
    lease = leased.json()["assignment"]
    assert leased.status_code == 200 and "progress" not in lease
    assert lease["item"]["id"] == first["item"]["id"]  # k = 2: the second slot of the same item
    assert len(next_sql) <= NEXT_BUDGET, "\n".join(next_sql)

    def submit(client, assignment_id, query="?progress=0"):
        return client.post(f"/api/v1/assignments/{assignment_id}/submit/{query}",
                           {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]}, format="json")

    first_label, first_sql = counted(lambda: submit(ann1, lease["id"]))
    assert first_label.status_code == 201 and "progress" not in first_label.json()
    assert len(first_sql) <= SUBMIT_BUDGET, "\n".join(first_sql)
    last_label, last_sql = counted(lambda: submit(ann2, first["id"]))
    assert last_label.status_code == 201
    assert len(last_sql) <= SUBMIT_BUDGET, "\n".join(last_sql)

    # What the statements did: two labels by two people on one item, its outcome, both leases closed.
    item = BatchItem.objects.get(item_id=first["item"]["id"], campaign=campaign)
    assert (item.status, item.final_value, item.taken) == ("labelled", 2, 2)
    assert sorted(Annotation.objects.filter(batch_item=item).values_list("annotator__username", "slot")) == [
        ("ann1", 2), ("ann2", 1)]
    assert set(Assignment.objects.filter(batch_item=item).values_list("status", flat=True)) == {"submitted"}

    # The page asks for progress; that is the only extra.
    shown, shown_sql = counted(lambda: ann1.post(f"/api/v1/campaigns/{campaign.pk}/next/"))
    assert set(shown.json()["assignment"]["progress"]) >= {"done", "total", "mine", "left_for_you"}
    assert len(shown_sql) <= NEXT_BUDGET + PROGRESS_BUDGET, "\n".join(shown_sql)
    saved, saved_sql = counted(lambda: submit(ann1, shown.json()["assignment"]["id"], query=""))
    assert saved.json()["progress"]["mine"] == 2
    assert len(saved_sql) <= SUBMIT_BUDGET + PROGRESS_BUDGET, "\n".join(saved_sql)
