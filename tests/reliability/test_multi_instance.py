"""Several hosts, shown on loopback: two gunicorn instances (deploy/gunicorn.conf.py, production settings), each
with its own data folder as on its own host, on one PostgreSQL and one Redis (broker and cache), behind one address
(a round-robin TCP proxy, perf/_services.py). 256 simulated annotators (HB_MULTI_ANNOTATORS sets fewer; the same
load timed against one instance: perf/multi_instance.py), half on the API's cycle and half on the page's, label a
campaign through the proxy: afterwards no item has more labels than its overlap, nobody labelled an item twice,
every label is there once, and no answer was a 5xx. The limits hold across the instances, their state being in the
database (sign-in, flags, runs) or in Redis (reports): wrong passwords sent to both instances add up to one
account's limit, flags on one lease to one lease's, and the reports one person asks of both to one rate. Celery
workers with their own data folders and model caches share the queues: every chunk of a run is scored once, and
the predictions are those of one process (a worker killed mid-chunk: tests/reliability/test_faults.py)."""
import os
import shutil

import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, connections
from django.db.models import Count
from rest_framework.authtoken.models import Token

from annotation.models import Annotation
from modeleval import actions, runner
from modeleval.models import ChunkState, EvalRun, Prediction, RunState
from perf._services import RoundRobinProxy
from perf.annotator_load import Gunicorn, HumanBaselineClient, drive, label_counts, make_load_campaign, server_env
from tests.modeleval.conftest import (  # noqa: F401 (fixtures)
    assert_same_predictions,
    demo_benchmark,
    packaged,
    start_worker,
    wait_for,
    worker_env,
)

pytestmark = [pytest.mark.slow, pytest.mark.services, pytest.mark.django_db(transaction=True)]

ANNOTATORS = int(os.environ.get("HB_MULTI_ANNOTATORS", "256"))
K = 2
LOGIN_LIMIT = 4
REPORT_RATE = 4
FLAGS_PER_LEASE = 3


def database_url():
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def hosts(tmp_path):
    """Two instances, each with its own HB_DATA_DIR, sharing the test database and this session's Redis db as
    broker and cache, behind one proxy: (proxy, [instance, instance])."""
    if connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.skip("several instances need DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis)")
    import redis

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()  # this session's own Redis db: no counts left over
    shared = {"CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "CACHE_URL": settings.CELERY_BROKER_URL,
              "HB_LOGIN_FAILURE_LIMIT": str(LOGIN_LIMIT), "HB_LOGIN_THROTTLE": "1000/min",
              "HB_REPORT_RATE": f"{REPORT_RATE}/min", "HB_FLAGS_PER_LEASE": str(FLAGS_PER_LEASE)}
    instances = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            env = server_env(database_url(), HB_DATA_DIR=str(tmp_path / name), **shared)
            instances.append(Gunicorn(env, tmp_path / f"gunicorn-{name}.log", workers=2, threads=4))
        proxy = RoundRobinProxy([f"127.0.0.1:{i.port}" for i in instances], tmp_path)
    except Exception:
        for instance in instances:
            instance.stop()
        raise
    yield proxy, instances
    proxy.stop()
    for instance in instances:
        instance.stop()


def test_annotators_behind_one_address_on_two_instances_keep_exactly_k_labels(hosts):
    proxy, instances = hosts
    people = [User.objects.create_user(f"m{i:03d}") for i in range(ANNOTATORS)]
    tokens = [Token.objects.create(user=person).key for person in people]
    items = ANNOTATORS * 2
    campaign, _ = make_load_campaign("multi", items, K, people, batch_size=max(8, items // 8), start=True)
    connections.close_all()  # the servers use their own connections

    clients = [HumanBaselineClient(proxy.base, token, campaign.pk, progress=n % 2 == 1) for n, token in
               enumerate(tokens)]
    result = drive(clients, max_seconds=600, max_cycles=items * K * 2)
    given = proxy.stop()

    assert result.failures == [] and result.stopped_by == "no_work", result.summary()
    assert result.server_errors == 0, result.codes
    assert min(given) > 0, given  # both instances served annotators
    over, twice, labels = label_counts(campaign)
    assert (over, twice) == (0, 0)
    assert labels == items * K == result.cycles  # every acknowledged label is there, once
    current = Annotation.objects.filter(campaign=campaign, superseded_at__isnull=True)
    assert not current.values("client_submission_id").annotate(n=Count("id")).filter(n__gt=1).exists()
    print(f"\n{result.summary(connections_per_instance=given)}")


def test_sign_in_flag_and_report_limits_add_up_across_the_instances(hosts):
    _, instances = hosts
    User.objects.create_user("victim", password="right-password-1", is_staff=True)
    connections.close_all()

    def sign_in(instance, password):
        return requests.post(f"{instance.base}/api/v1/auth/token/", data={"username": "victim", "password": password},
                             timeout=30)

    # Wrong passwords sent in turn to the two instances count on one counter: after LOGIN_LIMIT of them, both refuse
    # even the right password. Counted per instance, each would have seen only half the limit.
    wrong = [sign_in(instances[n % 2], "wrong").status_code for n in range(LOGIN_LIMIT)]
    assert wrong == [400] * LOGIN_LIMIT
    assert [sign_in(instance, "right-password-1").status_code for instance in instances] == [429, 429]

    # Reports: one rate per person whichever instance asks (the counters are in the shared cache, Redis).
    connections.close_all()
    Token.objects.filter(user__username="victim").delete()
    token = Token.objects.create(user=User.objects.get(username="victim")).key
    connections.close_all()
    codes = [requests.get(f"{instances[n % 2].base}/api/v1/reports/", params={"benchmark": "none"},
                          headers={"Authorization": f"Token {token}"}, timeout=30).status_code
             for n in range(REPORT_RATE + 2)]
    assert all(code != 429 for code in codes[:REPORT_RATE]), codes
    assert codes[REPORT_RATE:] == [429, 429], codes

    # Flags on one lease: counted from the database's rows whichever instance writes them.
    flagger = User.objects.create_user("flagger")
    campaign, _ = make_load_campaign("flags", 4, 1, [flagger], start=True)
    flagger_token = Token.objects.create(user=flagger).key
    connections.close_all()
    headers = {"Authorization": f"Token {flagger_token}"}
    lease = requests.post(f"{instances[0].base}/api/v1/campaigns/{campaign.pk}/next/", headers=headers, timeout=30)
    assignment = lease.json()["assignment"]["id"]
    codes = [requests.post(f"{instances[n % 2].base}/api/v1/assignments/{assignment}/flag/", headers=headers,
                           json={"comment": f"cut off ({n})"}, timeout=30).status_code
             for n in range(FLAGS_PER_LEASE + 2)]
    assert codes == [201] * FLAGS_PER_LEASE + [429, 429], codes


def own_model_cache(folder):
    """A host's own model cache: a copy of this machine's (hard links where they can be made, so no gigabytes are
    written), or an empty folder the worker converts the packaged model into when this machine has none yet."""
    def link(source, target):
        try:
            os.link(source, target)
        except OSError:  # another file system
            shutil.copy2(source, target)

    source = settings.MODEL_CACHE_DIR
    if source.is_dir():
        shutil.copytree(source, folder, copy_function=link, ignore=shutil.ignore_patterns("trained", "*.lock"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.model
@pytest.mark.timeout(480)
def test_workers_with_their_own_data_folders_score_each_chunk_once_as_one_process_would(
        start_worker, packaged, demo_benchmark, tmp_path):  # noqa: F811
    workers = []
    for name in ("host-a", "host-b"):
        folder = tmp_path / name
        folder.mkdir()
        cache = own_model_cache(folder / "models")
        workers.append(start_worker(name, HB_DATA_DIR=str(folder), HB_MODEL_CACHE=str(cache)))
    # Both listening before the run is queued, so that both take chunks from the start.
    wait_for(lambda: all(" ready." in w.tail(200) for w in workers), 120, "both workers to be ready", workers)
    run = actions.start_run(model=packaged, benchmark=demo_benchmark, limit=2, chunk_size=1)
    run = wait_for(lambda: EvalRun.objects.filter(pk=run.pk, state__in=[RunState.FINISHED, RunState.FAILED]).first(),
                   300, "the run to end", workers)
    assert run.state == RunState.FINISHED, run.reason

    chunks = list(run.chunks.values_list("state", "attempts", "worker"))
    assert len(chunks) == run.chunks_total >= 4
    assert {(state, attempts) for state, attempts, _ in chunks} == {(ChunkState.DONE, 1)}  # each scored once
    assert {worker.split("@")[0] for _, _, worker in chunks} == {"host-a", "host-b"}  # by both hosts
    predictions = Prediction.objects.filter(run=run)
    assert predictions.count() == run.items_total
    assert not predictions.values("item", "variant").annotate(n=Count("id")).filter(n__gt=1).exists()
    reference = actions.start_run(model=packaged, benchmark=demo_benchmark, limit=2, chunk_size=1, enqueue=False)
    assert runner.run_sync(reference).state == RunState.FINISHED
    assert_same_predictions(run, reference)
