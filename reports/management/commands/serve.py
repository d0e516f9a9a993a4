"""Run the platform on one machine: migrate, start an embedded worker, serve HTTP.

The worker is a Celery process on the embedded filesystem broker (or on CELERY_BROKER_URL when
set), so model runs started from the pages proceed while the web server answers.
"""
import os
import signal
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Migrate, start a worker for the gpu and cpu queues, and serve on ADDRPORT (default 127.0.0.1:8000)."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, addrport, no_worker, **options):
        call_command("migrate", interactive=False, verbosity=0)
        worker = None
        if not no_worker:
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu,cpu", "-c", "1",
                 "--pool", "solo", "--loglevel", "warning"],
                env=os.environ.copy(),
            )
            self.stdout.write(f"worker started (pid {worker.pid}) on {'the embedded broker' if settings.EMBEDDED_BROKER else settings.CELERY_BROKER_URL}")
        try:
            call_command("runserver", addrport, use_reloader=False)
        finally:
            if worker and worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=30)
