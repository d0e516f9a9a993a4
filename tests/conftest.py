import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("HB_SHARED_DATA", ROOT.parent / "shared" / "data"))
FED_PATH = SHARED_DATA / "fed" / "fed_data.json"
MUTUAL_PATH = SHARED_DATA / "botchat" / "mutual_test.jsonl"
PAPERS = SHARED_DATA.parent / "papers"
DEMO_DATA = ROOT / "benchmarks" / "demo_data"


@pytest.fixture
def fed_path():
    if not FED_PATH.is_file():
        print(f"skipping: FED data not found at {FED_PATH}")
        pytest.skip(f"FED data not found at {FED_PATH} (set HB_SHARED_DATA)")
    return FED_PATH


@pytest.fixture
def mutual_path():
    if not MUTUAL_PATH.is_file():
        print(f"skipping: MuTual seeds not found at {MUTUAL_PATH}")
        pytest.skip(f"MuTual seeds not found at {MUTUAL_PATH} (set HB_SHARED_DATA)")
    return MUTUAL_PATH


@pytest.fixture
def paper():
    """The text of a study's paper (appendices included) from ../shared/papers, by file name."""
    def read(name):
        path = PAPERS / name
        if not path.is_file():
            print(f"skipping: paper not found at {path}")
            pytest.skip(f"paper not found at {path} (set HB_SHARED_DATA)")
        return path.read_text(encoding="utf-8")
    return read


@pytest.fixture(autouse=True)
def english_between_tests():
    """Each test starts and ends in the site's language: a page fetched in Korean or Chinese by the test client
    leaves that language active in the thread, and a report built after it would be written in it."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def reports_in_request(settings):
    """Reports computed inside the request, as a deployment without workers does; tests/reports/test_stored.py
    computes them on a real `cpu` worker instead."""
    settings.REPORTS_COMPUTE_IN_REQUEST = True


# Marks read from the fixtures a test uses, so that the fast lane (bin/test --fast: no test marked `database`,
# `services`, `model`, `browser` or `slow`) follows what each test needs without anyone keeping a list.
# pytest-django refuses the database to a test that asks for it otherwise, so none slips into the lane.
MARKED_BY_FIXTURE = {
    "database": {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                 "live_server", "django_db_setup"},
    "model": {"packaged", "smol"},
    "browser": {"browser", "page"},
}


def pytest_collection_modifyitems(items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("django_db"):
            item.add_marker("database")
        for mark, fixtures in MARKED_BY_FIXTURE.items():
            if used & fixtures:
                item.add_marker(mark)
