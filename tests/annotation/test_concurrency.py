"""32 concurrent clients (16 annotators x 2 threads, as with two browser tabs each), each thread with its
own database connection, lease and submit over HTTP on a 500-item batch with k=2."""
import threading
import time
from collections import Counter

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections
from django.db.models import Count

from annotation import actions
from annotation.models import Annotation, Assignment, BatchItem, ItemStatus
from benchmarks.importers.diqad import quality_form
from benchmarks.models import Benchmark, Item, Task

from .conftest import DIQAD_ANSWERS, api, sid

ANNOTATORS, THREADS_EACH, ITEMS, K = 16, 2, 500, 2


@pytest.mark.django_db(transaction=True)
def test_32_clients_give_exactly_k_labels_per_item():
    if connection.vendor != "postgresql":
        pytest.skip("row locks with SKIP LOCKED need PostgreSQL")
    staff = User.objects.create_user("boss", is_staff=True)
    task = Task.objects.create(benchmark=Benchmark.objects.create(slug="load", name="load"), slug="q", name="q",
                               form=quality_form())
    Item.objects.bulk_create([Item(task=task, external_id=f"x{i:03d}", content_hash=str(i),
                                   dialogue=[{"speaker": "user", "text": f"hello {i}"}]) for i in range(ITEMS)])
    campaign = actions.create_campaign(actor=staff, name="load", benchmark="load", protocol="production",
                                       settings={"overlap": K, "min_reading_seconds": 0, "batch_size": ITEMS})
    annotators = [User.objects.create_user(f"a{i:02d}") for i in range(ANNOTATORS)]
    for user in annotators:
        actions.add_member(campaign, actor=staff, user=user, role="annotator")
    actions.cut_batches(campaign, actor=staff)

    outcomes, failures = Counter(), []
    lock, start = threading.Lock(), threading.Barrier(ANNOTATORS * THREADS_EACH)

    def client_loop(user):
        client, seen = api(user), Counter()
        try:
            start.wait()
            while True:
                response = client.post(f"/api/v1/campaigns/{campaign.pk}/next/")
                if response.status_code != 200:
                    failures.append(("next", response.status_code, response.content[:200]))
                    break
                body = response.json()
                if body["status"] == "no_work":
                    break
                result = client.post(f"/api/v1/assignments/{body['assignment']['id']}/submit/",
                                     {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]}, format="json")
                code = result.json().get("code", result.status_code)
                seen[code] += 1
                if result.status_code not in (201, 409) or code not in (201, "already_submitted"):
                    failures.append(("submit", result.status_code, result.content[:200]))
                    break
        finally:
            with lock:
                outcomes.update(seen)
            connections.close_all()

    threads = [threading.Thread(target=client_loop, args=(user,)) for user in annotators for _ in range(THREADS_EACH)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    elapsed = time.perf_counter() - began
    assert not any(thread.is_alive() for thread in threads), "a client hung"
    assert failures == []

    labels = Annotation.objects.filter(campaign=campaign)
    assert labels.count() == ITEMS * K == outcomes[201]
    assert labels.values("batch_item", "annotator").distinct().count() == ITEMS * K  # nobody twice on an item
    per_item = Counter(labels.values("batch_item").annotate(n=Count("id")).values_list("n", flat=True))
    assert per_item == {K: ITEMS}  # no item with a third label, none with fewer
    assert BatchItem.objects.filter(campaign=campaign, status=ItemStatus.LABELLED, taken=K).count() == ITEMS
    assert not Assignment.objects.filter(campaign=campaign, status="leased").exists()
    rate = ITEMS * K / elapsed
    print(f"\n{ANNOTATORS * THREADS_EACH} clients: {ITEMS * K} annotations in {elapsed:.1f} s = {rate:.0f} "
          f"annotations/s; duplicate submits answered 409 already_submitted: {outcomes['already_submitted']}")
