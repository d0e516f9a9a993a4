"""Run the platform on one machine: migrate, load the demo (--demo), serve HTTP, then start an embedded worker.

The worker is a Celery process on the embedded filesystem broker (or on CELERY_BROKER_URL when
set), so model runs started from the pages proceed while the web server answers. It starts once the
server answers, so that the first page never waits behind a model being loaded, and takes the model
runs queued before it (the demo's among them). It lives and dies with this process: SIGTERM and
Ctrl-C stop both, and a server killed outright (SIGKILL, a crash) takes the worker with it, so no
orphan keeps a model in memory.
"""
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

DEFAULT_ADDRPORT = "127.0.0.1:8000"
WORKER_GRACE_S = 10  # a warm shutdown finishes the chunk at hand; past this it is killed and re-delivered
PR_SET_PDEATHSIG = 1
ANSWER_PATH = "accounts/login/"


def die_with_parent():
    """In the worker, before exec: the kernel sends SIGTERM when the thread that started it ends, which
    the starting thread does only when the worker has ended or the server process dies (Linux)."""
    # Not Linux: SIGTERM and Ctrl-C still stop the worker through stop_worker.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def stop_worker(worker, grace=WORKER_GRACE_S):
    if worker.poll() is not None:
        return
    worker.terminate()
    try:
        worker.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        # Late acks: the chunk it was scoring goes back to the queue and is scored again next time.
        worker.kill()
        worker.wait()


def url_of(addrport):
    host, _, port = addrport.rpartition(":")
    return f"http://{host or '127.0.0.1'}:{port}/"


def answers(url):
    """True once the server sends any HTTP answer for `url` (an error page counts: it answered)."""
    try:
        urllib.request.urlopen(url, timeout=10).close()
    except urllib.error.HTTPError:
        pass
    except OSError:
        return False
    return True


def raise_interrupt(signum, frame):
    # runserver stops on KeyboardInterrupt and exits normally, so the `finally` below runs.
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = ("Migrate, load the demo (--demo), serve on ADDRPORT (default "
            f"{DEFAULT_ADDRPORT}; bin/run takes it from HB_ADDRPORT) and, once it answers, start a worker for the "
            "gpu and cpu queues.")

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default=DEFAULT_ADDRPORT)
        parser.add_argument("--no-worker", action="store_true")
        parser.add_argument("--demo", action="store_true",
                            help="load the demo first (manage.py demo); its model runs wait in the queue for the "
                                 "worker")

    def stage(self, text):
        """Print what is being done now, flushed at once; returns a function that prints how long it took."""
        self.stdout.write(f"{text} ...")
        self.stdout.flush()
        started = time.monotonic()
        return lambda: self.stdout.write(f"{text}: done in {time.monotonic() - started:.1f} s")

    def handle(self, addrport, no_worker, demo, **options):
        done = self.stage("migrating the database")
        call_command("migrate", interactive=False, verbosity=0)
        done()
        if demo:
            done = self.stage("loading the demo")
            call_command("demo", stdout=self.stdout)
            done()
        signal.signal(signal.SIGTERM, raise_interrupt)
        url = url_of(addrport)
        self.worker, self.stopping, self.lock = None, False, threading.Lock()
        threading.Thread(target=self.when_answering, args=(url, not no_worker), daemon=True).start()
        self.stdout.write(f"starting the web server at {url} ...")
        try:
            call_command("runserver", addrport, use_reloader=False)
        finally:
            with self.lock:
                self.stopping = True
            if self.worker:
                stop_worker(self.worker)

    def when_answering(self, url, start_worker):
        """Wait until the server answers, say so, then start the worker and wait on it: the kernel's signal to the
        worker (die_with_parent) follows the life of the thread that started it, so this thread outlives it."""
        while not answers(url + ANSWER_PATH):
            if self.stopping:
                return
            time.sleep(0.2)
        self.stdout.write(f"HumanBaseline answers at {url} (stop with Ctrl-C)")
        if not start_worker:
            return
        with self.lock:
            if self.stopping:
                return
            self.worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu,cpu", "-c", "1",
                 "--pool", "solo", "--loglevel", "warning"],
                env=os.environ.copy(), preexec_fn=die_with_parent,
            )
        broker = "the embedded broker" if settings.EMBEDDED_BROKER else settings.CELERY_BROKER_URL
        self.stdout.write(f"worker started (pid {self.worker.pid}) on {broker}: it scores the queued model runs, "
                          f"whose progress shows on {url}runs/")
        status = self.worker.wait()
        if not self.stopping:
            self.stderr.write(f"the worker stopped (exit status {status}): queued model runs wait for the next start")
