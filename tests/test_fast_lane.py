"""The fast lane (bin/test --fast) is the tests marked for no database, service, model, browser or slowness, and
the `database` mark follows the fixtures a test uses (tests/conftest.py): every pure unit of metrics runs in the
lane, and a test that reaches the database only through a fixture stays out of it."""
import os
import re
import subprocess
import sys

from tests.conftest import ROOT

FAST_LANE = re.search(r'^FAST_LANE="([^"]+)"$', (ROOT / "bin" / "test").read_text(), re.M).group(1)
THROUGH_A_FIXTURE = "tests/modeleval/test_runs.py::test_run_is_cut_into_chunks_with_counters"  # db via demo_benchmark


def fast_lane(*paths):
    """The node ids the fast lane selects among `paths`, and pytest's closing line."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", FAST_LANE, *paths], cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True,
                          timeout=600)
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-2000:]
    return {line for line in lines if "::" in line}, lines[-1]


def test_every_metrics_unit_runs_in_the_fast_lane():
    """Every unit of metrics is pure: none needs a database, a service, a model or a browser; only the long coverage
    simulations, marked slow, wait for the whole suite."""
    selected, closing = fast_lane("tests/metrics")
    slow = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m",
                           "slow", "tests/metrics"], cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True,
                          timeout=600).stdout.splitlines()
    slow = {line for line in slow if "::" in line}
    deselected = re.search(r"(\d+) deselected", closing)
    assert selected and (int(deselected.group(1)) if deselected else 0) == len(slow), closing
    needing = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m",
                              "database or services or model or browser", "tests/metrics"], cwd=ROOT,
                             env=os.environ.copy(), capture_output=True, text=True, timeout=600).stdout.splitlines()
    assert not [line for line in needing if "::" in line]


def test_a_test_using_the_database_through_a_fixture_stays_out():
    selected, closing = fast_lane(THROUGH_A_FIXTURE, "tests/metrics/test_package.py")
    assert THROUGH_A_FIXTURE not in selected and "1 deselected" in closing, closing
    assert selected  # the same run selects the pure units beside it
