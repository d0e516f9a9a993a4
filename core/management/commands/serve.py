"""Run the platform on one machine: migrate, start an embedded worker, serve HTTP.

The worker is a Celery process on the embedded filesystem broker (or on CELERY_BROKER_URL when
set), so model runs started from the pages proceed while the web server answers. It lives and dies
with this process: SIGTERM and Ctrl-C stop both, and a server killed outright (SIGKILL, a crash)
takes the worker with it, so no orphan keeps a model in memory.
"""
import ctypes
import os
import signal
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

DEFAULT_ADDRPORT = "127.0.0.1:8000"
WORKER_GRACE_S = 10  # a warm shutdown finishes the chunk at hand; past this it is killed and re-delivered
PR_SET_PDEATHSIG = 1


def die_with_parent():
    """In the worker, before exec: the kernel sends SIGTERM when the server process dies (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: SIGTERM and Ctrl-C still stop the worker through stop_worker


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


def raise_interrupt(signum, frame):
    # runserver stops on KeyboardInterrupt and exits normally, so the `finally` below runs.
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = ("Migrate, start a worker for the gpu and cpu queues, and serve on ADDRPORT (default "
            f"{DEFAULT_ADDRPORT}; bin/run takes it from HB_ADDRPORT).")

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default=DEFAULT_ADDRPORT)
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, addrport, no_worker, **options):
        call_command("migrate", interactive=False, verbosity=0)
        signal.signal(signal.SIGTERM, raise_interrupt)
        worker = None
        if not no_worker:
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu,cpu", "-c", "1",
                 "--pool", "solo", "--loglevel", "warning"],
                env=os.environ.copy(), preexec_fn=die_with_parent,
            )
            self.stdout.write(f"worker started (pid {worker.pid}) on {'the embedded broker' if settings.EMBEDDED_BROKER else settings.CELERY_BROKER_URL}")
        self.stdout.write(f"HumanBaseline is at {url_of(addrport)} (stop with Ctrl-C)")
        try:
            call_command("runserver", addrport, use_reloader=False)
        finally:
            if worker:
                stop_worker(worker)
