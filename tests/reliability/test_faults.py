"""Faults on purpose. Each scenario is bounded in time and stops what it started, private servers included.

- Three Celery workers killed with SIGKILL, each in the middle of a different chunk of one model run: the run
  finishes with the predictions of an uninterrupted run, once each, no chunk near its attempts limit.
- A worker killed with SIGKILL under the shipped visibility timeout (an hour): its chunk's heartbeat stops, beat
  sends it again within a minute, another worker scores it, the predictions are an uninterrupted run's.
- Redis (a private redis-server, broker and cache) stopped for 30 s: annotators keep signing in and labelling,
  a run started meanwhile is refused with 503 broker_unavailable, the run in flight resumes once Redis is back.
- PostgreSQL (a private cluster) restarted under 8 annotators: requests during the outage answer 503
  database_unavailable with Retry-After, the retries go through, every acknowledged label is kept, none twice.

The first tests check the same answers in-process, without any server to break.
"""
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import redis
import requests
from django.contrib.auth.models import User
from django.db import InterfaceError, OperationalError
from django.db.models import Count
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotation import actions as annotation_actions
from annotation.models import Annotation, BatchItem
from benchmarks.actions import import_items
from modeleval import actions, runner
from modeleval.models import ChunkState, EvalRun, ModelSpec, Prediction, RunChunk, RunEvent, RunState
from perf.annotator_load import Gunicorn, free_port, make_load_campaign, server_env
from tests.annotation.conftest import DIQAD_ANSWERS, make_campaign, sid
from tests.conftest import DEMO_DATA, ROOT
from tests.modeleval.conftest import assert_same_predictions, client_for, wait_for


def skip(reason):
    print(f"skipping: {reason}")
    pytest.skip(reason)


def killed_mid_chunk(worker, chunk) -> bool:
    """Kill `worker` while it scores `chunk`, as a machine dying: frozen first (SIGSTOP), so that the chunk is seen
    unfinished before the kill and not finished in the instant between seeing and killing; a chunk that finished
    before the freeze leaves the worker thawed (SIGCONT) and alive, and False returned."""
    os.killpg(worker.proc.pid, signal.SIGSTOP)
    time.sleep(0.5)  # a commit already on its way is seen
    chunk.refresh_from_db()
    if (chunk.state, chunk.attempts) == (ChunkState.RUNNING, 1):
        worker.kill()
        return True
    os.killpg(worker.proc.pid, signal.SIGCONT)
    return False


def no_duplicate_predictions(run):
    return not Prediction.objects.filter(run=run).values("item", "variant").annotate(n=Count("id")).filter(n__gt=1)


# ---------------------------------------------------------------- the answers, in-process


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError("server closed the connection unexpectedly"),
                                   InterfaceError("connection already closed")])
def test_a_lost_database_answers_503_with_retry_after(client, monkeypatch, error):
    def lost(*args, **kwargs):
        raise error

    monkeypatch.setattr("frontend.throttling.take_attempt", lost)  # every sign-in path counts first
    api = client.post("/api/v1/auth/token/", {"username": "ann", "password": "pw"})
    assert api.status_code == 503 and int(api["Retry-After"]) > 0
    assert api.json()["code"] == "database_unavailable" and "retry" in api.json()["detail"]
    page = client.post("/accounts/login/", {"username": "ann", "password": "pw"})
    assert page.status_code == 503 and int(page["Retry-After"]) > 0 and b"retry" in page.content


@pytest.mark.django_db
def test_sign_in_goes_on_when_the_cache_is_unreachable(client, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}}  # nothing listens there
    User.objects.create_user("ann", password="right-password")
    wrong = client.post("/api/v1/auth/token/", {"username": "ann", "password": "wrong"})
    assert wrong.status_code == 400 and wrong.json()["code"] == "invalid_credentials"
    assert client.post("/api/v1/auth/token/", {"username": "ann", "password": "right-password"}).status_code == 200
    assert client.post("/accounts/login/", {"username": "ann", "password": "right-password"}).status_code == 302


@pytest.mark.django_db(transaction=True)  # chunks are sent on commit
def test_a_run_started_while_the_broker_is_unreachable_is_refused_with_503_and_failed(
        monkeypatch, researcher, demo_benchmark):
    model = ModelSpec.objects.create(name="tiny", sha256="0" * 64)

    def unreachable(*args, **kwargs):
        raise BrokerUnreachable("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr("modeleval.tasks.score_chunk.apply_async", unreachable)
    answer = client_for(researcher).post("/api/v1/runs/", {"model": model.name, "benchmark": "db-demo"}, format="json")
    assert answer.status_code == 503 and int(answer["Retry-After"]) > 0
    assert answer.json()["code"] == "broker_unavailable" and "again" in answer.json()["detail"]
    run = EvalRun.objects.get()  # failed, so that it is neither left queued for ever nor scored later
    assert run.state == RunState.FAILED and "unreachable" in run.reason
    assert not run.chunks.exclude(state=ChunkState.SKIPPED).exists()


# ---------------------------------------------------------------- SIGKILL, three times

# Short, so that a killed worker's chunk comes back soon. Unacknowledged messages are restored when a worker
# starts (and every 100 s), and only one worker runs at a time here, so no chunk is handed out while scored.
KILL_VISIBILITY_TIMEOUT = 2


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(480)
def test_three_workers_killed_mid_chunk_and_the_run_matches_an_uninterrupted_one(
        start_worker, researcher, packaged, demo_benchmark):
    env = {"CELERY_VISIBILITY_TIMEOUT": str(KILL_VISIBILITY_TIMEOUT)}
    answer = client_for(researcher).post("/api/v1/runs/", {"model": packaged.name, "benchmark": "db-demo",
                                                           "chunk_size": 1}, format="json")
    assert answer.status_code == 201, answer.content
    run_id = answer.json()["id"]
    chunks_total = EvalRun.objects.get(pk=run_id).chunks_total
    assert chunks_total >= 10  # room for three victims, each after a chunk its worker finished

    workers, victims = [], []
    for n in range(3):
        worker = start_worker(f"doomed{n}", **env)
        workers.append(worker)

        def scoring_a_fresh_chunk(name=f"doomed{n}@"):
            # The worker finished a chunk (its model is loaded) and is scoring a first delivery of another:
            # never a chunk already killed once, so none comes near the attempts limit.
            mine = RunChunk.objects.filter(run_id=run_id, worker__startswith=name)
            if mine.filter(state=ChunkState.DONE).exists():
                return mine.filter(state=ChunkState.RUNNING, attempts=1).first()
            return None

        while not killed_mid_chunk(worker, victim := wait_for(scoring_a_fresh_chunk, 240,
                                                                f"worker {n} scoring a fresh chunk", workers,
                                                                every=0.05)):
            pass
        victims.append(victim)
        # Redis hands an unacknowledged message out again once its visibility timeout has passed; the next
        # worker restores such messages when it starts.
        time.sleep(max(0.0, victim.started_at.timestamp() + KILL_VISIBILITY_TIMEOUT + 1 - time.time()))
    assert len({victim.pk for victim in victims}) == 3

    workers.append(start_worker("survivor", **env))
    # The uninterrupted reference is scored here while the survivor works.
    reference = actions.start_run(model=packaged, benchmark=demo_benchmark, chunk_size=1, enqueue=False)
    assert runner.run_sync(reference).state == RunState.FINISHED
    run = wait_for(lambda: EvalRun.objects.filter(pk=run_id, state__in=[RunState.FINISHED, RunState.FAILED]).first(),
                   240, "the survivor to finish the run", workers)
    assert run.state == RunState.FINISHED, run.reason
    assert (run.items_done, run.chunks_done) == (run.items_total, chunks_total)
    for victim in victims:
        victim.refresh_from_db()
        # One killed delivery and one that finished: two attempts, below the limit of three.
        assert (victim.state, victim.attempts) == (ChunkState.DONE, 2)
        assert run.events.filter(kind="chunk_retried", chunk=victim).count() == 1
    assert set(run.chunks.exclude(pk__in=[v.pk for v in victims]).values_list("attempts", flat=True)) == {1}

    assert Prediction.objects.filter(run=run).count() == run.items_total and no_duplicate_predictions(run)
    assert_same_predictions(run, reference)


# ---------------------------------------------------------------- a lost worker, with the shipped timeout

@pytest.mark.model
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(480)
def test_a_worker_killed_mid_chunk_is_replaced_within_a_minute_under_the_shipped_visibility_timeout(
        start_worker, worker_env, researcher, packaged, demo_benchmark, tmp_path):
    """The broker would hand the killed worker's message out again only after an hour (the shipped visibility
    timeout); the chunk's heartbeat stops instead, and beat's sweep sends it again within a minute."""
    from django.conf import settings

    from tests.modeleval.conftest import LoggedProcess

    env = {"CELERY_VISIBILITY_TIMEOUT": "3600"}  # the shipped value (deploy/env.example)
    start_worker.stop_all()  # the survivor of the test before would score this run alone
    workers = [start_worker("sweeper", queue="cpu", **env)]  # beat's sweep runs on the cpu queue
    beat = LoggedProcess([sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel", "info",
                          "--schedule", str(tmp_path / "beat-schedule")], tmp_path / "beat.log",
                         env={**worker_env, **env})
    try:
        workers += [start_worker("first", **env), start_worker("second", **env)]
        answer = client_for(researcher).post("/api/v1/runs/", {"model": packaged.name, "benchmark": "db-demo",
                                                               "chunk_size": 1}, format="json")
        assert answer.status_code == 201, answer.content
        run_id = answer.json()["id"]

        def scoring_a_fresh_chunk():
            """A chunk being scored by a worker that has finished one before it (its model loaded, its heartbeat
            running): whichever worker the broker happened to feed first is the one that dies."""
            chunks = RunChunk.objects.filter(run_id=run_id)
            for name in ("first@", "second@"):
                mine = chunks.filter(worker__startswith=name)
                fresh = mine.filter(state=ChunkState.RUNNING, attempts=1).first()
                if fresh and mine.filter(state=ChunkState.DONE).exists():
                    return fresh
            return None

        while True:
            victim = wait_for(scoring_a_fresh_chunk, 240, "a worker scoring a fresh chunk", workers, every=0.05)
            lost, survivor = (workers[1], "second@") if victim.worker.startswith("first@") else (workers[2], "first@")
            if killed_mid_chunk(lost, victim):
                break
        killed_at = time.monotonic()
        # Sent again within a minute of the kill (heartbeat silent for CHUNK_LOST_AFTER_S, a sweep after it) ...
        limit = settings.CHUNK_LOST_AFTER_S + settings.CHUNK_RECLAIM_EVERY_S
        assert limit <= 60
        wait_for(lambda: RunEvent.objects.filter(run_id=run_id, chunk=victim, reason__startswith="worker lost")
                 .exists(), limit + 15, "the lost chunk to be sent again", workers + [beat])
        sent_after = time.monotonic() - killed_at
        # ... and scored by the worker still standing, while the lost worker's message waits out its hour.
        redone = wait_for(lambda: RunChunk.objects.filter(pk=victim.pk, state=ChunkState.DONE).first(), 240,
                          "the lost chunk to be scored again", workers)
        print(f"\nlost chunk sent again {sent_after:.0f} s after the kill, done {time.monotonic() - killed_at:.0f} s "
              "after it")
        assert redone.attempts == 2 and redone.worker.startswith(survivor)
        run = wait_for(lambda: EvalRun.objects.filter(pk=run_id, state__in=[RunState.FINISHED, RunState.FAILED])
                       .first(), 240, "the run to finish", workers)
    finally:
        beat.stop()
    assert run.state == RunState.FINISHED, run.reason
    assert Prediction.objects.filter(run=run).count() == run.items_total and no_duplicate_predictions(run)
    reference = actions.start_run(model=packaged, benchmark=demo_benchmark, chunk_size=1, enqueue=False)
    assert runner.run_sync(reference).state == RunState.FINISHED
    assert_same_predictions(run, reference)


# ---------------------------------------------------------------- Redis away for 30 s

OUTAGE_S = 30
OUTAGE_VISIBILITY_TIMEOUT = 10  # s: longer than one chunk of two items


class RedisServer:
    """A private redis-server on a free loopback port, persisting to an append-only file in its own folder."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.proc = folder, free_port(), None
        self.url = f"redis://127.0.0.1:{self.port}"

    def start(self):
        with open(self.folder / "redis.log", "a") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
                 "--appendonly", "yes", "--save", "", "--daemonize", "no"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 20
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start:\n{(self.folder / 'redis.log').read_text()[-2000:]}")
            time.sleep(0.1)

    def answers(self):
        try:
            return redis.Redis(port=self.port, socket_timeout=1, socket_connect_timeout=1).ping()
        except redis.RedisError:
            return False

    def shutdown(self):
        """As a clean stop does: the append-only file is written out, then the server exits."""
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown"], capture_output=True, timeout=30)
        self.proc.wait(timeout=30)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


@pytest.fixture
def private_redis():
    if not (shutil.which("redis-server") and shutil.which("redis-cli")):
        skip("redis-server and redis-cli are needed for the Redis outage test")
    folder = Path(tempfile.mkdtemp(prefix="hb-faults-redis-"))
    server = RedisServer(folder)
    try:
        server.start()
        yield server
    finally:
        server.kill()
        shutil.rmtree(folder, ignore_errors=True)


def sign_in(base, username, password):
    return requests.post(f"{base}/api/v1/auth/token/", data={"username": username, "password": password}, timeout=30)


def label_everything(base, tokens, campaign_id):
    """Each annotator in turn: next -> submit, until every one of them is told there is no work."""
    codes, busy = Counter(), set(tokens)
    while busy:
        for token in sorted(busy):
            headers = {"Authorization": f"Token {token}"}
            lease = requests.post(f"{base}/api/v1/campaigns/{campaign_id}/next/", headers=headers, timeout=30)
            codes[lease.status_code] += 1
            if lease.status_code != 200 or lease.json()["status"] == "no_work":
                busy.discard(token)
                continue
            submitted = requests.post(f"{base}/api/v1/assignments/{lease.json()['assignment']['id']}/submit/",
                                      json={"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]},
                                      headers=headers, timeout=30)
            codes[submitted.status_code] += 1
    return codes


def finished(run_id):
    return EvalRun.objects.filter(pk=run_id, state__in=[RunState.FINISHED, RunState.FAILED]).first()


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(420)
def test_redis_stopped_for_30_s_annotators_go_on_and_the_run_resumes(
        private_redis, start_worker, worker_env, researcher, packaged, demo_benchmark, tmp_path):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")
    staff = User.objects.create_user("boss", is_staff=True)
    people = {name: User.objects.create_user(name, password="pw") for name in ("ann1", "ann2")}
    campaign = make_campaign(staff, people, "diqad-demo", roles={"ann1": "annotator", "ann2": "annotator"},
                             overlap=1, min_reading_seconds=0, batch_size=8)
    annotation_actions.cut_batches(campaign, actor=staff)
    items = BatchItem.objects.filter(campaign=campaign).count()

    broker = f"{private_redis.url}/0"
    workers = [start_worker("outage", CELERY_BROKER_URL=broker,
                            CELERY_VISIBILITY_TIMEOUT=str(OUTAGE_VISIBILITY_TIMEOUT))]
    # Production's layout: Redis is the web's broker and its cache (sign-in throttling).
    web = Gunicorn(server_env(worker_env["DATABASE_URL"], CELERY_BROKER_URL=broker, CACHE_URL=f"{private_redis.url}/1"),
                   tmp_path / "gunicorn.log", workers=1, threads=4)
    try:
        researcher_auth = {"Authorization": f"Token {sign_in(web.base, 'researcher', 'x').json()['token']}"}

        def start_run(**fields):
            return requests.post(f"{web.base}/api/v1/runs/", headers=researcher_auth, timeout=60,
                                 json={"model": packaged.name, "benchmark": "db-demo", **fields})

        started = start_run(chunk_size=2)
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        wait_for(lambda: EvalRun.objects.get(pk=run_id).chunks_done >= 1, 240, "a first chunk scored", workers)

        private_redis.shutdown()
        down_since = time.monotonic()
        assert not private_redis.answers()

        # (a) Annotators sign in (the throttling cache is Redis) and label every item meanwhile.
        tokens = []
        for name in people:
            answer = sign_in(web.base, name, "pw")
            assert answer.status_code == 200, answer.text
            tokens.append(answer.json()["token"])
        wrong = sign_in(web.base, "ann1", "wrong")
        assert wrong.status_code == 400 and wrong.json()["code"] == "invalid_credentials"
        codes = label_everything(web.base, tokens, campaign.pk)
        assert set(codes) <= {200, 201} and codes[201] == items, codes
        assert Annotation.objects.filter(campaign=campaign).count() == items

        # (b) A run started now is refused clearly and failed, never left queued with nothing on the queue.
        refused = start_run(limit=1)
        assert refused.status_code == 503 and int(refused.headers["Retry-After"]) > 0, refused.text
        assert refused.json()["code"] == "broker_unavailable"
        refused_run = EvalRun.objects.exclude(pk=run_id).get()
        assert refused_run.state == RunState.FAILED and "unreachable" in refused_run.reason

        time.sleep(max(0.0, down_since + OUTAGE_S - time.monotonic()))
        run = EvalRun.objects.get(pk=run_id)
        assert run.state == RunState.RUNNING and run.chunks_done < run.chunks_total  # waiting on the broker
        private_redis.start()  # same port and folder: the queued chunks come back from the append-only file

        run = wait_for(lambda: finished(run_id), 180, "the run to finish after Redis came back", workers)
        assert run.state == RunState.FINISHED, run.reason
        assert run.items_done == run.items_total == Prediction.objects.filter(run=run).count()
        assert no_duplicate_predictions(run)
        assert set(run.chunks.values_list("state", "attempts")) == {(ChunkState.DONE, 1)}  # none scored twice

        # The web process reconnects to the broker by itself.
        after = start_run(limit=1, chunk_size=5)
        assert after.status_code == 201, after.text
        assert wait_for(lambda: finished(after.json()["id"]), 120, "a run started after the outage",
                        workers).state == RunState.FINISHED
    finally:
        web.stop()
        for worker in workers:
            worker.stop()


# ---------------------------------------------------------------- PostgreSQL restarted under load

RESTART_ANNOTATORS, RESTART_ITEMS, RESTART_K = 8, 100, 2
RESTART_AFTER = RESTART_ITEMS * RESTART_K // 3  # acknowledged submits before the restart
DOWN_S = 2  # the server stays down this long, so that requests certainly arrive during the outage
RETRY_PAUSE_S = 0.25  # clients retry sooner than Retry-After asks, to keep the test short


class PostgresCluster:
    """A private cluster in a temporary folder on a free port. PostgreSQL refuses to run as root, so as root
    every command runs as the postgres system user."""

    def __init__(self):
        self.initdb, self.pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
        if not (self.initdb and self.pg_ctl):
            skip("initdb and pg_ctl are needed for the PostgreSQL restart test")
        self.as_owner = []
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                owner = None
            if owner is None or not shutil.which("runuser"):
                skip("running as root, the PostgreSQL restart test needs a postgres system user and runuser")
            self.as_owner = ["runuser", "-u", "postgres", "--"]
        self.root = Path(tempfile.mkdtemp(prefix="hb-faults-pg-"))
        if self.as_owner:
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.data, self.port = self.root / "data", free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/faults"

    def _run(self, *command):
        done = subprocess.run([*self.as_owner, *command], capture_output=True, text=True, timeout=90)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}\n{self.log()}")

    def log(self):
        path = self.root / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def create(self):
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale",
                  "--no-sync")
        self.start()
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE faults")

    def start(self):
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "60",
                  "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1", "start")

    def stop(self, mode="fast"):
        self._run(self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def destroy(self):
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop("immediate")
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                print(f"stopping the private PostgreSQL failed: {error}")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def private_postgres():
    cluster = PostgresCluster()
    try:
        cluster.create()
        yield cluster
    finally:
        cluster.destroy()


def in_django(database_url, function, **kwargs):
    """Call one of this module's functions in a fresh process whose database is `database_url`; its JSON result."""
    script = ("import json, sys, django; django.setup(); from tests.reliability import test_faults; "
              f"print(json.dumps(test_faults.{function}(**json.loads(sys.argv[1]))))")
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    done = subprocess.run([sys.executable, "-c", script, json.dumps(kwargs)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def seed_restart_campaign(annotators, items, k):
    from rest_framework.authtoken.models import Token

    people = [User.objects.create_user(f"restart{i:02d}") for i in range(annotators)]
    campaign, _ = make_load_campaign("restart", items, k, people)
    return {"campaign": campaign.pk, "tokens": [Token.objects.create(user=person).key for person in people]}


def labels_of(campaign, acknowledged):
    labels = Annotation.objects.filter(campaign_id=campaign, superseded_at__isnull=True)
    per_item = labels.values("batch_item").annotate(n=Count("id")).values_list("n", flat=True)
    kept = set(labels.filter(pk__in=acknowledged).values_list("pk", flat=True))
    return {"labels": labels.count(), "missing": sorted(set(acknowledged) - kept),
            "item_annotator_pairs": labels.values("batch_item", "annotator").distinct().count(),
            "labels_per_item": {str(n): count for n, count in Counter(per_item).items()}}


class PatientAnnotator(threading.Thread):
    """next -> submit until told there is no work. A 503 is retried, a submit with the same client_submission_id,
    so that a retry can never label twice; anything else unexpected stops this annotator and is reported."""

    def __init__(self, base, token, campaign_id, deadline):
        super().__init__(daemon=True)
        self.base, self.campaign_id, self.deadline = base, campaign_id, deadline
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Token {token}"
        self.codes, self.acknowledged, self.bad_503, self.recovered = Counter(), [], [], 0
        self.sent_503 = []  # when each request answered with 503 was sent
        self.failure, self.done = None, False

    def call(self, method, path, **kwargs):
        retried = False
        while time.monotonic() < self.deadline:
            sent = time.monotonic()
            answer = self.http.request(method, self.base + path, timeout=30, **kwargs)
            self.codes[answer.status_code] += 1
            if answer.status_code != 503:
                self.recovered += retried
                return answer
            self.sent_503.append(sent)
            if answer.json().get("code") != "database_unavailable" or not answer.headers.get("Retry-After"):
                self.bad_503.append(answer.text[:300])
            retried = True
            time.sleep(RETRY_PAUSE_S)
        raise TimeoutError(f"{method} {path} still answered 503 at the deadline")

    def run(self):
        try:
            while time.monotonic() < self.deadline:
                lease = self.call("POST", f"/api/v1/campaigns/{self.campaign_id}/next/")
                assert lease.status_code == 200, f"next: {lease.status_code} {lease.text[:300]}"
                if lease.json()["status"] == "no_work":
                    self.done = True
                    return
                body = {"client_submission_id": sid(), "answers": DIQAD_ANSWERS[2]}
                submitted = self.call("POST", f"/api/v1/assignments/{lease.json()['assignment']['id']}/submit/",
                                      json=body)
                assert submitted.status_code in (200, 201), f"submit: {submitted.status_code} {submitted.text[:300]}"
                self.acknowledged.append(submitted.json()["annotation"]["id"])
        except Exception as error:  # noqa: BLE001 (reported by the test)
            self.failure = repr(error)[:500]
        finally:
            self.http.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_postgres_restarted_under_annotators_answers_503_and_keeps_every_acknowledged_label(
        private_postgres, tmp_path):
    migrated = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, capture_output=True,
                              text=True, timeout=240, env={**os.environ, "DATABASE_URL": private_postgres.url})
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    seeded = in_django(private_postgres.url, "seed_restart_campaign", annotators=RESTART_ANNOTATORS,
                       items=RESTART_ITEMS, k=RESTART_K)

    web = Gunicorn(server_env(private_postgres.url), tmp_path / "gunicorn.log", workers=2, threads=4)
    try:
        deadline = time.monotonic() + 150
        annotators = [PatientAnnotator(web.base, token, seeded["campaign"], deadline) for token in seeded["tokens"]]
        for annotator in annotators:
            annotator.start()
        while (sum(len(a.acknowledged) for a in annotators) < RESTART_AFTER
               and any(a.is_alive() for a in annotators) and time.monotonic() < deadline):
            time.sleep(0.05)
        acknowledged_before = sum(len(a.acknowledged) for a in annotators)
        private_postgres.stop("fast")  # open transactions are rolled back, connections cut
        time.sleep(DOWN_S)
        private_postgres.start()
        back_at = time.monotonic()
        for annotator in annotators:
            annotator.join(timeout=max(1.0, deadline - time.monotonic()) + 35)

        # A quiet restart: every server thread keeps a persistent connection the restart breaks. Checked before
        # use, none of them fails the first request after it.
        private_postgres.stop("fast")
        private_postgres.start()
        after_quiet_restart = Counter(
            requests.get(f"{web.base}/api/v1/campaigns/{seeded['campaign']}/", timeout=30,
                         headers={"Authorization": f"Token {seeded['tokens'][0]}"}).status_code for _ in range(16))
    finally:
        web.stop()

    assert RESTART_AFTER <= acknowledged_before < RESTART_ITEMS * RESTART_K  # the restart came midway
    assert not any(a.is_alive() for a in annotators)
    assert [a.failure for a in annotators if a.failure] == []
    assert all(a.done for a in annotators)  # every one of them went on until the work ran out
    codes = sum((a.codes for a in annotators), Counter())
    assert not [code for code in codes if code >= 500 and code != 503], codes
    assert codes[503] > 0, codes  # the outage was seen, and answered as one
    assert [text for a in annotators for text in a.bad_503] == []
    assert sum(a.recovered for a in annotators) > 0  # retried calls that then went through
    # Once the server is back, no request fails on a connection the restart broke (CONN_HEALTH_CHECKS).
    assert max(sent for a in annotators for sent in a.sent_503) < back_at
    assert after_quiet_restart == {200: 16}, after_quiet_restart

    acknowledged = [pk for a in annotators for pk in a.acknowledged]
    assert len(acknowledged) == len(set(acknowledged)) == RESTART_ITEMS * RESTART_K
    found = in_django(private_postgres.url, "labels_of", campaign=seeded["campaign"], acknowledged=acknowledged)
    assert found["missing"] == []  # every label acknowledged before, during or after the restart is kept
    assert found["labels"] == found["item_annotator_pairs"] == RESTART_ITEMS * RESTART_K  # nobody twice on an item
    assert found["labels_per_item"] == {str(RESTART_K): RESTART_ITEMS}  # no item over (or under) k
    print(f"\nrestart under load: {dict(codes)}, {sum(a.recovered for a in annotators)} calls recovered after 503")
