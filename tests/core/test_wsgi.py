"""A web worker is ready when it has started: importing config.wsgi, what gunicorn does as a worker boots,
loads the URLconf and every view module behind it, so that the first request a worker serves after a start or
a recycle (gunicorn's max_requests) does not wait for those imports (0.6 s here)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_wsgi_module_loads_the_view_modules():
    code = ("import sys, config.wsgi; "
            "print(sorted(m for m in ('frontend.views', 'annotation.api', 'reports.api') if m not in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
