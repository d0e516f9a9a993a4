"""Load at CI size: gunicorn (deploy/gunicorn.conf.py) on the test database, 16 annotators with API tokens
running lease -> read 1 s -> submit through a 200-item campaign with k=2 (ten batches, so batches start under
load), while a QC reviews the campaign's first, handed-in batch over HTTP and a model run on a real Celery
worker scores the same items, all at the same time. The driver is perf/annotator_load.py's, bounded in
cycles and wall clock. Afterwards the database must hold exactly items x k current labels, nobody twice on
an item, no item with k + 1 labels, one prediction per item, and no 5xx answer anywhere. No timing is
asserted: this machine's speed is not the point, correctness under concurrency is."""
import threading
from collections import Counter

import pytest
import requests
from django.contrib.auth.models import User
from django.db import connection, connections
from django.db.models import Count

from annotation import actions
from annotation.models import Annotation, Batch, BatchItem, ItemStatus
from modeleval import actions as runs
from modeleval.models import EvalRun, Prediction, RunState
from perf.annotator_load import MC_ANSWERS, Gunicorn, HumanBaselineClient, drive, make_load_campaign, server_env
from tests.annotation.conftest import sid
from tests.modeleval.conftest import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.model, pytest.mark.django_db(transaction=True)]

ANNOTATORS, ITEMS, K, BATCH = 16, 200, 2, 20
READ_SECONDS = 1  # the campaign's minimum reading time; the clients wait it out before submitting


@pytest.fixture
def web(tmp_path):
    db = connection.settings_dict
    if connection.vendor != "postgresql":
        pytest.skip("the load test needs PostgreSQL (DATABASE_URL)")
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    server = Gunicorn(server_env(url), tmp_path / "gunicorn.log", workers=2, threads=4)
    yield server
    server.stop()


def token(base, username):
    answer = requests.post(f"{base}/api/v1/auth/token/", data={"username": username, "password": "pw"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["token"]


def review_batch(base, qc_token, batch_id, codes, errors):
    """The QC's whole review over HTTP: start, label every sampled item as the annotators did, accept."""
    http = requests.Session()
    http.headers["Authorization"] = f"Token {qc_token}"

    def call(method, path, expect, **kwargs):
        answer = http.request(method, f"{base}/api/v1/batches/{batch_id}/{path}/", timeout=60, **kwargs)
        codes[answer.status_code] += 1
        if answer.status_code != expect:
            raise AssertionError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json()

    try:
        call("POST", "start_review", 200)
        for entry in call("GET", "qc_sample", 200)["sample"]:
            call("POST", "qc_label", 200, json={"batch_item": entry["batch_item"], "value": entry["annotator_value"]})
        call("POST", "accept", 200, json={"reason": "load test"})
    except Exception as error:  # noqa: BLE001 (reported by the test)
        errors.append(repr(error))
    finally:
        http.close()


def test_annotators_a_qc_and_a_model_run_under_load_keep_exactly_k_labels(web, start_worker, packaged):
    annotators = [User.objects.create_user(f"a{i:02d}", password="pw") for i in range(ANNOTATORS)]
    pre = [User.objects.create_user(f"pre{i}", password="pw") for i in range(K)]
    qc = User.objects.create_user("qc", password="pw")
    campaign, staff = make_load_campaign("load", ITEMS + BATCH, K, annotators + pre, batch_size=BATCH,
                                         min_reading_seconds=0, multiple_choice=True)
    actions.add_member(campaign, actor=staff, user=qc, role="qc")
    # Batch 1 is labelled by two other annotators and handed in, so the QC has something to review.
    first = Batch.objects.get(campaign=campaign, number=1)
    for person in pre:
        for _ in range(BATCH):
            actions.submit_annotation(actions.lease_next_item(campaign, annotator=person).assignment,
                                      annotator=person, answers=MC_ANSWERS, client_submission_id=sid())
    first.refresh_from_db()
    assert first.state == "handed_in"  # by itself, once its last item had its final label (auto_hand_in)
    actions.update_settings(campaign, actor=staff, changes={"min_reading_seconds": READ_SECONDS})
    load_items = BatchItem.objects.filter(campaign=campaign).exclude(batch=first)
    assert load_items.count() == ITEMS and not load_items.exclude(status=ItemStatus.PENDING).exists()

    tokens = [token(web.base, u.username) for u in annotators]
    qc_token = token(web.base, qc.username)
    connections.close_all()  # the server and the QC thread use their own connections

    qc_codes, qc_errors = Counter(), []
    reviewer = threading.Thread(target=review_batch, args=(web.base, qc_token, first.pk, qc_codes, qc_errors))
    clients = [HumanBaselineClient(web.base, t, campaign.pk, answers=MC_ANSWERS) for t in tokens]
    worker = start_worker("load")
    run = runs.start_run(model=packaged, benchmark=campaign.benchmark, chunk_size=20)  # queued on commit
    reviewer.start()  # the review and the run go on while the annotators lease and submit
    result = drive(clients, think=READ_SECONDS + 0.05, max_seconds=240, max_cycles=ITEMS * K * 2,
                   server_pid=web.proc.pid)
    reviewer.join(timeout=60)
    stopped = [RunState.FINISHED, RunState.FAILED, RunState.CANCELLED]
    run = wait_for(lambda: EvalRun.objects.filter(pk=run.pk, state__in=stopped).first(), 300,
                   "the model run to finish", [worker])

    assert not reviewer.is_alive() and qc_errors == []
    assert result.stopped_by == "no_work", result.summary()
    assert result.failures == []
    assert result.server_errors == 0 and not any(code >= 500 for code in qc_codes), (result.codes, qc_codes)
    assert Batch.objects.get(pk=first.pk).state == "accepted"

    labels = Annotation.objects.filter(batch_item__in=load_items, superseded_at__isnull=True)
    assert labels.count() == ITEMS * K == result.cycles
    assert labels.values("batch_item", "annotator").distinct().count() == ITEMS * K  # nobody twice on an item
    per_item = Counter(labels.values("batch_item").annotate(n=Count("id")).values_list("n", flat=True))
    assert per_item == {K: ITEMS}  # no item with k + 1 labels, none with fewer
    assert load_items.filter(status=ItemStatus.LABELLED, taken=K).count() == ITEMS
    assert run.state == RunState.FINISHED, run.reason
    predictions = Prediction.objects.filter(run=run)
    assert predictions.count() == ITEMS + BATCH == predictions.values("item").distinct().count()
    print(f"\n{result.summary(qc_requests=sum(qc_codes.values()), run_items=run.items_done)}")
