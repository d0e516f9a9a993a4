"""Flags have bounds per lease and per person (count, comment length), and every list that grows is paged: flags,
a batch's and a run's events, a run's chunks, a campaign's settings versions and its disagreements by guideline."""
import threading

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Assignment, ItemFlag
from modeleval.models import RunChunk, RunEvent

pytestmark = pytest.mark.usefixtures("empty_cache")


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def flag(user, assignment_id, comment="The last turn is cut off."):
    return api(user).post(f"/api/v1/assignments/{assignment_id}/flag/", {"comment": comment}, format="json")


@pytest.mark.django_db
def test_one_lease_takes_only_so_many_flags(world, settings):
    settings.FLAGS_PER_LEASE = 3
    annotator, lease = world.users["annotator"], world.pks["assignment"]  # it holds one flag already
    assert [flag(annotator, lease).status_code for _ in range(2)] == [201, 201]
    over = flag(annotator, lease)
    assert over.status_code == 429 and over.json()["code"] == "too_many_flags", over.content
    assert ItemFlag.objects.filter(author=annotator).count() == 3
    long = flag(annotator, Assignment.objects.filter(annotator=annotator).exclude(pk=lease).first().pk, "x" * 2001)
    assert long.status_code == 400 and "2000" in long.json()["detail"]


@pytest.mark.django_db
def test_one_person_sends_only_so_many_flags_a_day(world, settings):
    settings.FLAGS_PER_LEASE, settings.FLAGS_PER_PERSON_PER_DAY = 3, 4
    annotator = world.users["annotator"]
    leases = list(Assignment.objects.filter(annotator=annotator).values_list("pk", flat=True))
    codes = [flag(annotator, lease).status_code for lease in leases[:4]]
    assert codes == [201, 201, 201, 429], codes
    over = flag(annotator, leases[4])
    assert over.json()["code"] == "too_many_flags" and 0 < int(over["Retry-After"]) <= 86400
    assert ItemFlag.objects.filter(author=annotator).count() == 4


@pytest.mark.django_db(transaction=True)
def test_flags_sent_at_once_are_counted_one_by_one(world, settings):
    settings.FLAGS_PER_LEASE = 3
    annotator, lease = world.users["annotator"], world.pks["assignment"]
    codes, start = [], threading.Barrier(8)

    def one():
        try:
            start.wait()
            codes.append(flag(annotator, lease).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(codes) == [201, 201] + [429] * 6, codes
    batch_item = Assignment.objects.get(pk=lease).batch_item
    assert ItemFlag.objects.filter(author=annotator, batch_item=batch_item).count() == 3


@pytest.mark.django_db
def test_every_list_that_grows_is_paged(world, settings):
    settings.FLAGS_PER_LEASE = 10
    staff, annotator, run = world.users["staff"], world.users["annotator"], world.run
    for _ in range(3):
        flag(annotator, world.pks["assignment"])
    RunEvent.objects.bulk_create(RunEvent(run=run, kind="started") for _ in range(3))
    RunChunk.objects.bulk_create(RunChunk(run=run, index=n, item_ids=[]) for n in range(1, 4))
    campaign = world.campaign.pk
    settings.MAX_PAGE_SIZE = 2
    client = Client()
    client.force_login(staff)
    for url in (f"/api/v1/campaigns/{campaign}/flags/", f"/api/v1/batches/{world.pks['batch']}/events/",
                f"/api/v1/runs/{run.pk}/events/", f"/api/v1/runs/{run.pk}/chunks/",
                f"/api/v1/campaigns/{campaign}/settings/", f"/api/v1/campaigns/{campaign}/disagreements/"):
        page = client.get(url, {"limit": 100000000})
        assert page.status_code == 200, (url, page.status_code)
        body = page.json()
        assert isinstance(body, dict) and len(body["results"]) <= 2 and "count" in body, url
    flags = client.get(f"/api/v1/campaigns/{campaign}/flags/", {"limit": 2}).json()
    assert flags["count"] == 4 and flags["next"] and [f["comment"] for f in flags["results"]]
    older = client.get(flags["next"]).json()
    assert {f["id"] for f in older["results"]}.isdisjoint(f["id"] for f in flags["results"])
