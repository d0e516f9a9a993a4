"""The embedded broker keeps its files under the data folder: a worker on it writes nothing where it was started
(bin/run starts it in the repository's root)."""
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_a_worker_on_the_embedded_broker_writes_nothing_where_it_runs(tmp_path):
    where, data = tmp_path / "cwd", tmp_path / "data"
    where.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(HB_DATA_DIR=str(data), PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="config.settings")
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 -- open while the worker runs
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu,cpu", "-c", "1",
                               "--pool", "solo", "--loglevel", "info"], cwd=where, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        # The worker's remote control binds a broadcast exchange as it starts: kombu writes its table then.
        while not list((data / "broker" / "control").glob("*.exchange")) and not list(where.iterdir()):
            assert worker.poll() is None and time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        log.close()
    assert sorted(path.name for path in where.iterdir()) == []
    assert list((data / "broker" / "control").glob("*.exchange"))
