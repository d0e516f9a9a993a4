"""The embedded default (SQLite) keeps its stale-marking triggers through migrations: SQLite changes a table by
building a new one and renaming it, which refused to run while a trigger named the table (a fresh `migrate`
failed at reports 0003) and would drop the changed table's own triggers silently."""
import os
import subprocess
import sys

import pytest

from reports import triggers
from tests.conftest import ROOT

CHECK = """
from django.db import connection
from benchmarks.models import Benchmark, Task
from reports.models import StoredReport
with connection.cursor() as cursor:
    cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'reports_stale_%'")
    print("triggers", len(cursor.fetchall()))
bench = Benchmark.objects.create(slug="b", name="b")
stored = StoredReport.objects.create(key="k", benchmark=bench, query={})
Task.objects.create(benchmark=bench, slug="t", name="t",
                    form={"primary": "answer",
                          "questions": [{"key": "answer", "type": "single_choice", "options": "item"}]})
print("stale", StoredReport.objects.get(pk=stored.pk).stale_since is not None)
"""


def manage(env, *args):
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, timeout=300,
                          capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("steps", [["migrate"], ["migrate reports 0002_stale_triggers", "migrate"]],
                         ids=["fresh", "from-0002"])
def test_sqlite_migrates_and_its_triggers_mark_reports_stale_afterwards(tmp_path, steps):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    env["HB_DATA_DIR"] = str(tmp_path / "data")
    for step in steps:
        done = manage(env, *step.split(), "--verbosity", "0")
        assert done.returncode == 0, done.stderr[-3000:]
    checked = manage(env, "shell", "-c", CHECK)
    assert checked.returncode == 0, checked.stderr[-3000:]
    expected = len(list(triggers.sqlite()))
    assert expected == len(triggers.PATHS) * 3
    assert f"triggers {expected}" in checked.stdout and "stale True" in checked.stdout, checked.stdout
