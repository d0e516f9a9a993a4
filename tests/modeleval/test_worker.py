"""A real Celery worker on the gpu queue, on this session's database and Redis db."""
import pytest

from benchmarks.models import Item
from modeleval import actions
from modeleval.models import ChunkState, EvalRun, Prediction, RunState

from .conftest import client_for, wait_for

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def worker(start_worker):
    return start_worker("steady")


def finished(run_id):
    run = EvalRun.objects.get(pk=run_id)
    return run if run.state not in (RunState.QUEUED, RunState.RUNNING) else None


def test_worker_finishes_a_run_started_through_the_api(worker, researcher, packaged, demo_benchmark):
    response = client_for(researcher).post(
        "/api/v1/runs/", {"model": packaged.name, "benchmark": "db-demo", "limit": 1, "chunk_size": 2}, format="json")
    assert response.status_code == 201, response.content
    run = wait_for(lambda: finished(response.json()["id"]), 240, "the run to end", [worker])
    assert run.state == RunState.FINISHED, run.reason
    assert (run.items_done, run.chunks_done) == (run.items_total, run.chunks_total) == (5, 3)
    assert Prediction.objects.filter(run=run).count() == 5
    chunks = list(run.chunks.order_by("index"))
    assert all(c.state == ChunkState.DONE and c.attempts == 1 and c.worker.startswith("steady@") for c in chunks)
    event = run.events.get(kind="finished")
    warm_seconds = (chunks[-1].finished_at - chunks[1].started_at).total_seconds()
    warm = sum(len(c.item_ids) for c in chunks[1:]) / warm_seconds
    print(f"\nworker: {event.figures['items']} items in {event.figures['seconds']:.1f} s including the model load "
          f"({event.figures['items_per_s']:.2f} items/s); after the first chunk {warm:.2f} items/s")


def test_poison_chunk_is_given_up_after_max_attempts(worker, packaged, demo_benchmark):
    task = demo_benchmark.tasks.get(slug="emotion_detection")
    broken = Item.objects.create(task=task, external_id="zz-broken", dialogue=[{"speaker": "a", "text": "hi"}],
                                 fields={"question": "?"}, source_gold={"answer": "A"})
    run = actions.start_run(model=packaged, benchmark=demo_benchmark, item_ids=[broken.pk], max_attempts=3)
    run = wait_for(lambda: finished(run.pk), 120, "the poisoned run to fail", [worker])
    chunk = run.chunks.get()
    assert (run.state, chunk.state, chunk.attempts) == (RunState.FAILED, ChunkState.FAILED, 3)
    assert run.reason.startswith("chunk 0 failed after 3 attempts: ValueError: item zz-broken: fields.options")
    assert [e.kind for e in run.events.all()] == ["created", "started", "chunk_attempt_failed", "chunk_retried",
                                                  "chunk_attempt_failed", "chunk_retried", "failed"]
