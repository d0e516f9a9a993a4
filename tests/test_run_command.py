"""The run command's last steps on the embedded default: SQLite, filesystem broker, demo data, served."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import FED_PATH, ROOT


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_embedded_platform_serves_login_page_and_schema(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env["HB_DATA_DIR"] = str(tmp_path / "data")
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run(manage + ["migrate", "--verbosity", "0"], env=env, check=True, cwd=ROOT, timeout=300)
    demo = subprocess.run(manage + ["demo"], env=env, check=True, cwd=ROOT, timeout=300, capture_output=True, text=True)
    assert "annotator1" in demo.stdout and "password" in demo.stdout
    if FED_PATH.is_file():
        assert "fed: 2 tasks and 500 items created" in demo.stdout
    assert (tmp_path / "data" / "humanbaseline.sqlite3").is_file()

    port = free_port()
    server = subprocess.Popen(manage + ["serve", f"127.0.0.1:{port}"], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        login = None
        for _ in range(120):
            try:
                login = urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5).read().decode()
                break
            except OSError:
                assert server.poll() is None, server.stdout.read()
                time.sleep(0.5)
        assert login is not None and "Sign in" in login and "csrfmiddlewaretoken" in login
        schema = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/schema/", timeout=10).read().decode()
        assert "openapi" in schema and "/api/v1/items/" in schema
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    assert "worker started" in output
