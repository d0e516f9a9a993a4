"""A worker killed with SIGKILL mid-run: its chunk comes back, a new worker finishes the run, and
the predictions equal those of an uninterrupted run, once each."""
import time

import pytest
from django.db.models import Count

from modeleval import actions, runner
from modeleval.models import ChunkState, EvalRun, Prediction, RunState

from .conftest import assert_same_predictions, client_for, wait_for

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
VISIBILITY_TIMEOUT = 6  # short, so that the killed worker's message comes back quickly


def test_killed_worker_is_replaced_and_the_run_matches_an_uninterrupted_one(
        start_worker, researcher, packaged, demo_benchmark):
    env = {"CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT)}
    first = start_worker("doomed", **env)
    request = {"model": packaged.name, "benchmark": "db-demo", "limit": 1, "chunk_size": 1}
    run_id = client_for(researcher).post("/api/v1/runs/", request, format="json").json()["id"]

    def midway():
        run = EvalRun.objects.get(pk=run_id)
        running = run.chunks.filter(state=ChunkState.RUNNING).first()
        return running if run.chunks_done >= 2 and running else None

    victim = wait_for(midway, 240, "two chunks done and a third running", [first])
    first.kill()
    victim.refresh_from_db()
    assert victim.state == ChunkState.RUNNING and victim.attempts == 1  # killed mid-chunk, nothing reported
    done_before = EvalRun.objects.get(pk=run_id).chunks_done
    assert done_before < 5

    # The broker hands the unacknowledged message out again once its visibility timeout has passed
    # (a new worker restores such messages when it starts).
    time.sleep(max(0.0, victim.started_at.timestamp() + VISIBILITY_TIMEOUT + 1 - time.time()))
    second = start_worker("replacement", **env)
    run = wait_for(lambda: EvalRun.objects.filter(pk=run_id, state__in=["finished", "failed"]).first(), 240,
                   "the replacement to finish the run", [first, second])
    assert run.state == RunState.FINISHED, run.reason
    assert (run.items_done, run.chunks_done) == (5, 5)
    victim.refresh_from_db()
    assert victim.attempts == 2 and victim.worker.startswith("replacement@")
    assert run.events.filter(kind="chunk_retried", chunk=victim).exists()

    # Once each, and the same predictions as a run that nobody interrupted.
    assert Prediction.objects.filter(run=run).count() == 5
    assert not Prediction.objects.filter(run=run).values("item", "variant").annotate(n=Count("id")).filter(n__gt=1)
    reference = actions.start_run(model=packaged, benchmark=demo_benchmark, limit=1, chunk_size=1, enqueue=False)
    assert runner.run_sync(reference).state == RunState.FINISHED
    assert_same_predictions(run, reference)
