"""Several machines, shown on loopback: gunicorn (deploy/gunicorn.conf.py) and two Celery gpu workers as
separate processes on one PostgreSQL database and one Redis broker. A run started over HTTP with a token
is cut into chunks, both workers take some, and the run finishes."""
import socket
import subprocess
import sys

import pytest
import requests

from modeleval.models import EvalRun
from perf._services import stop_process_group
from tests.conftest import ROOT
from tests.modeleval.conftest import packaged, start_worker, wait_for, worker_env  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def web(worker_env, tmp_path):
    """gunicorn with the production settings file, on a free loopback port."""
    port = free_port()
    env = {**worker_env, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": "2", "GUNICORN_THREADS": "2",
           "GUNICORN_ACCESS_LOG": str(tmp_path / "access.log")}
    log = open(tmp_path / "gunicorn.log", "w")  # noqa: SIM115 -- open while the server runs
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "config.wsgi"],
                            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def up():
        try:
            return requests.get(f"{base}/api/v1/benchmarks/", timeout=5).status_code in (401, 403)
        except requests.RequestException:
            return proc.poll() is not None  # exited: stop waiting, the assertion below says why

    wait_for(up, 60, "gunicorn to answer")
    assert proc.poll() is None, (tmp_path / "gunicorn.log").read_text()[-2000:]
    yield base
    stop_process_group(proc)
    log.close()


def test_two_workers_share_one_run_started_over_http(web, start_worker, packaged, django_user_model):  # noqa: F811
    from benchmarks.actions import import_items
    from tests.conftest import DEMO_DATA

    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    django_user_model.objects.create_user("ops", password="s3cret-pass", is_staff=True)
    workers = [start_worker("gpu0"), start_worker("gpu1")]
    token = requests.post(f"{web}/api/v1/auth/token/", data={"username": "ops", "password": "s3cret-pass"},
                          timeout=10).json()["token"]
    http = requests.Session()
    http.headers["Authorization"] = f"Token {token}"
    started = http.post(f"{web}/api/v1/runs/", json={"model": packaged.name, "benchmark": "db-demo", "limit": 2,
                                                     "chunk_size": 1}, timeout=30)
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]

    def ended():
        state = http.get(f"{web}/api/v1/runs/{run_id}/", timeout=10).json()["state"]
        return state if state not in ("queued", "running") else None

    assert wait_for(ended, 300, "the run to end", workers) == "finished", EvalRun.objects.get(pk=run_id).reason
    chunks = http.get(f"{web}/api/v1/runs/{run_id}/chunks/", timeout=10).json()["results"]
    assert len(chunks) == 10 and all(c["state"] == "done" for c in chunks)
    by_worker = {c["worker"].split("@")[0] for c in chunks}
    assert by_worker == {"gpu0", "gpu1"}, [c["worker"] for c in chunks]
