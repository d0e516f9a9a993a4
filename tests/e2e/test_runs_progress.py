"""The runs page lists the newest run first and shows a run's progress while its one chunk is being scored."""
from pathlib import Path

import pytest

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions
from modeleval.models import ChunkState, ModelSpec, RunState
from tests.conftest import DEMO_DATA

from .conftest import expect, make_user, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOOK = Path("/work/shots/accounts")


def test_newest_run_first_and_progress_within_a_chunk(page):
    make_user("res", researcher=True)
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    spec = ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)
    benchmark = Benchmark.objects.get(slug="db-demo")
    older = actions.start_run(model=spec, benchmark=benchmark, enqueue=False, limit=1)
    newer = actions.start_run(model=spec, benchmark=benchmark, enqueue=False, chunk_size=64)
    assert newer.chunks_total == 1 and newer.items_total > 3
    newer.state = RunState.RUNNING
    newer.save(update_fields=["state"])
    newer.chunks.update(state=ChunkState.RUNNING, items_scored=3)
    sign_in(page, "res")
    page.goto("/runs/")
    rows = page.locator("#runs tr[data-run]")
    expect(rows.first).to_have_attribute("data-run", str(newer.pk))
    expect(rows.nth(1)).to_have_attribute("data-run", str(older.pk))
    expect(rows.first.locator(".scored")).to_have_text(f"3 / {newer.items_total} items scored · chunk 0 of 1")
    expect(rows.first.locator("progress")).to_have_attribute("value", "3")
    if LOOK.is_dir():
        page.locator("#runs").screenshot(path=str(LOOK / "runs-newest-first-progress.png"))
    newer.chunks.update(state=ChunkState.PENDING, items_scored=0)  # the page stops polling
    newer.state = RunState.CANCELLED
    newer.save(update_fields=["state"])
