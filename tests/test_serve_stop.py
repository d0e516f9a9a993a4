"""`manage.py serve` (what bin/run starts) stops its embedded worker with it: no orphan keeps the model."""
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT
from tests.test_run_command import embedded_env, free_port

pytestmark = pytest.mark.slow


def start_serve(tmp_path, *extra):
    env = embedded_env(tmp_path)
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "serve", f"127.0.0.1:{port}", *extra],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
            break
        except OSError:
            assert server.poll() is None, server.stdout.read()
            time.sleep(0.5)
    else:
        pytest.fail("serve did not answer")
    return server, port


def children_after_start(server):
    children = []
    for _ in range(120):
        children = psutil.Process(server.pid).children(recursive=True)
        if children:
            return children
        time.sleep(0.5)
    pytest.fail("serve started no worker")


def local_mode_answers(port):
    """The local mode serves the site's own pages and static files, never Django's debug pages."""
    base = f"http://127.0.0.1:{port}"
    try:
        urllib.request.urlopen(f"{base}/no-such-page/", timeout=10)
        pytest.fail("an unknown URL answered 200")
    except urllib.error.HTTPError as error:
        page = error.read().decode()
        assert error.code == 404 and 'id="not-found"' in page and "URLconf" not in page, page[:500]
    assert urllib.request.urlopen(f"{base}/favicon.ico", timeout=10).read()[:4] == b"\x00\x00\x01\x00"
    assert b".topbar" in urllib.request.urlopen(f"{base}/static/frontend/app.css", timeout=10).read()


def still_running(server):
    """Each process of the server's group with its state and, for its threads, where the kernel has them wait."""
    out = []
    for process in [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]:
        with contextlib.suppress(psutil.Error, OSError):
            waits = {task.name: (task / "wchan").read_text() for task in Path(f"/proc/{process.pid}/task").iterdir()}
            out.append((process.pid, process.status(), process.cmdline()[:8], waits))
    return out


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_stopping_serve_stops_its_worker(tmp_path, how):
    server, port = start_serve(tmp_path)
    try:
        children = children_after_start(server)
        local_mode_answers(port)
        if how == "sigterm":
            server.send_signal(signal.SIGTERM)  # `kill PID`, systemd, docker stop: the server process only
        else:
            os.killpg(server.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole foreground group
        try:
            output = server.communicate(timeout=90)[0]
        except subprocess.TimeoutExpired as stuck:
            told = stuck.output.decode(errors="replace") if isinstance(stuck.output, bytes) else stuck.output or ""
            pytest.fail(f"serve still running 90 s after {how}; its processes: {still_running(server)}\n"
                        f"{told[-4000:]}")
        _, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, f"left running after {how}: {[p.cmdline() for p in alive]}\n{output[-2000:]}"
        assert f"http://127.0.0.1:{port}/" in output
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)


def test_worker_dies_with_a_killed_server(tmp_path):
    """Even SIGKILL, which runs no clean-up, takes the worker down (the kernel signals it)."""
    server, _ = start_serve(tmp_path)
    try:
        children = children_after_start(server)
        server.kill()
        server.communicate(timeout=30)
        _, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, [p.cmdline() for p in alive]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
