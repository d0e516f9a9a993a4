"""The run command's last steps on the embedded default: SQLite, filesystem broker, demo data, served."""
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
import requests

from humanbaseline.management.commands.demo import DEMO_PASSWORD
from tests.conftest import FED_PATH, ROOT


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def embedded_env(tmp_path):
    """bin/run's environment: no database or broker named (SQLite and the embedded broker), data under tmp_path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env["HB_DATA_DIR"] = str(tmp_path / "data")
    return env


def wait_for_login_page(server, port):
    for _ in range(600):
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5).read().decode()
        except OSError:
            assert server.poll() is None, server.stdout.read()
            time.sleep(0.5)
    pytest.fail("the server did not answer")


def collect_output(server):
    """The server's output lines as they come, gathered by a thread so that a test can wait for one of them."""
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(server.stdout.readline, "")), daemon=True)
    reader.start()
    return lines, reader


def wait_for_line(lines, text, seconds=120):
    """serve says it answers from its own thread, once its own probe got through: that may come after ours."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not any(text in line for line in lines):
        time.sleep(0.2)


@pytest.mark.slow
def test_embedded_platform_serves_login_page_and_schema(tmp_path):
    env = embedded_env(tmp_path)
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
    lines, reader = collect_output(server)
    answering = f"HumanBaseline answers at http://127.0.0.1:{port}/"
    try:
        login = wait_for_login_page(server, port)
        assert "Sign in" in login and "csrfmiddlewaretoken" in login
        with pytest.raises(urllib.error.HTTPError) as anonymous:  # the schema is for signed-in people
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/schema/", timeout=10)
        assert anonymous.value.code in (401, 403)
        wait_for_line(lines, answering)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        reader.join(timeout=60)
    output = "".join(lines)
    assert answering in output, output  # the worker's start: test_serve_stop.py


def login(base, username):
    """A requests session signed in through the login page, as a person is."""
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    answer = session.post(f"{base}/accounts/login/", timeout=30, allow_redirects=False, data={
        "csrfmiddlewaretoken": token, "username": username, "password": DEMO_PASSWORD})
    assert answer.status_code == 302, answer.text[-500:]
    return session


@pytest.mark.slow
@pytest.mark.model
def test_run_answers_first_and_its_worker_then_scores_the_demo(tmp_path):
    """What bin/run starts: the demo is loaded and its model run queued, the server answers, and only then does the
    worker start and score the run, whose progress the runs page reads from the API."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "serve", "--demo", f"127.0.0.1:{port}"],
                              env=embedded_env(tmp_path), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True)
    try:
        wait_for_login_page(server, port)
        researcher = login(base, "researcher1")
        seen = []
        deadline = time.monotonic() + 1200
        while time.monotonic() < deadline:
            [run] = researcher.get(f"{base}/api/v1/runs/?benchmark=diqad-demo", timeout=30).json()["results"]
            seen.append((run["state"], run["progress"]["items_done"]))
            if run["state"] not in ("queued", "running"):
                break
            assert server.poll() is None
            time.sleep(1)
        assert run["state"] == "finished" and run["progress"]["items_done"] == run["progress"]["items_total"] == 8, seen
        assert researcher.get(f"{base}/runs/", timeout=30).status_code == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    stages = ["migrating the database ...", "loading the demo ...", "queued for the model worker",
              "starting the web server at", f"HumanBaseline answers at {base}/", "worker started"]
    at = [next((n for n, line in enumerate(output.splitlines()) if stage in line), None) for stage in stages]
    assert None not in at and at == sorted(at), output
