import json

import pytest
from django.core.cache import cache

from annotation import actions
from benchmarks.actions import import_items
from tests.annotation.conftest import diqad, make_campaign, people, staff, submit_score  # noqa: F401 (fixtures)

SCRIPT = "<script>window.pwned = 1</script>"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def write_items(path, items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def diqad_item(n, turns=2, text=None, label=2):
    dialogue = [{"speaker": "user" if i % 2 == 0 else "expert", "text": text or f"Turn {i} of item {n}."}
                for i in range(turns)]
    return {"id": f"x-{n:03}", "domain": "legal", "dialogue": dialogue, "label": label,
            "reasons": [] if label == 2 else ["not_relevant"], "needs_verification": 0}


@pytest.fixture
def hostile(db, tmp_path):
    """A DiQAD benchmark whose first item carries markup in its text and has 24 turns."""
    items = [diqad_item(1, turns=24, text=f"Hello {SCRIPT} <b>bold</b>"), diqad_item(2), diqad_item(3, label=0),
             diqad_item(4)]
    import_items(write_items(tmp_path / "hostile.jsonl", items), "diqad", "hostile")
    return "hostile"


def production(staff, people, benchmark, **settings):
    values = {"overlap": 1, "batch_size": 4, "qc_sample_size": 4, "min_reading_seconds": 0, "seed": 1, **settings}
    campaign = make_campaign(staff, people, benchmark, **values)
    actions.cut_batches(campaign, actor=staff)
    return campaign
