"""A lost worker's chunk comes back in a minute, not after the broker's visibility timeout of an hour: the
worker scoring a chunk writes a heartbeat, and beat's sweep sends a chunk whose heartbeat stopped again
(issue 41, item 6). The whole story with a worker killed by SIGKILL is in tests/reliability/test_faults.py."""
import time
from datetime import timedelta

import pytest
from django.conf import settings as conf
from django.utils import timezone

from modeleval import runner
from modeleval.models import ChunkState, EvalRun, ModelSpec, RunChunk, RunEvent, RunState


@pytest.fixture
def run(demo_benchmark):
    model = ModelSpec.objects.create(name="m", source="packaged")
    return EvalRun.objects.create(model=model, benchmark=demo_benchmark, mode="generate", state=RunState.RUNNING,
                                  prompt_sha256="0" * 64, prompt_version="custom", chunks_total=4)


def chunk(run, index, state, silent_s, attempts=1):
    beat = timezone.now() - timedelta(seconds=silent_s)
    return RunChunk.objects.create(run=run, index=index, item_ids=[], state=state, attempts=attempts,
                                   worker=f"w{index}@host", started_at=beat, heartbeat_at=beat)


def test_the_sweep_sends_again_only_chunks_whose_worker_stopped_beating(db, run, monkeypatch):
    sent = []
    monkeypatch.setattr("modeleval.actions.enqueue_chunks", lambda run_id, only=None, **kw: sent.append((run_id, only)))
    lost = chunk(run, 0, ChunkState.RUNNING, conf.CHUNK_LOST_AFTER_S + 5)
    alive = chunk(run, 1, ChunkState.RUNNING, 1)
    done = chunk(run, 2, ChunkState.DONE, 600)
    assert runner.reclaim_lost_chunks() == [lost.pk]
    assert sent == [(run.pk, [lost.pk])]
    states = dict(RunChunk.objects.values_list("pk", "state"))
    assert states == {lost.pk: ChunkState.PENDING, alive.pk: ChunkState.RUNNING, done.pk: ChunkState.DONE}
    event = RunEvent.objects.get(run=run, chunk=lost)
    assert "worker lost" in event.reason and event.figures["worker"] == "w0@host"
    # Sent once: the next sweep finds nothing more to send, and the attempt stays counted.
    assert runner.reclaim_lost_chunks() == [] and len(sent) == 1
    lost.refresh_from_db()
    assert lost.attempts == 1
    claim = runner.claim_chunk(lost.pk, "survivor@host")
    assert claim.chunk.attempts == 2 and claim.chunk.heartbeat_at >= claim.chunk.started_at


def test_a_stopped_run_is_not_swept(db, run, monkeypatch):
    monkeypatch.setattr("modeleval.actions.enqueue_chunks", lambda *a, **kw: pytest.fail("sent"))
    chunk(run, 0, ChunkState.RUNNING, conf.CHUNK_LOST_AFTER_S + 5)
    EvalRun.objects.filter(pk=run.pk).update(state=RunState.CANCELLED)
    assert runner.reclaim_lost_chunks() == []


@pytest.mark.django_db(transaction=True)  # the heartbeat thread writes through its own connection
def test_a_chunk_being_scored_beats(run, settings):
    settings.CHUNK_HEARTBEAT_S = 0.05
    scored = chunk(run, 0, ChunkState.RUNNING, 600)
    with runner.Heartbeat(scored):
        deadline = time.monotonic() + 30
        while RunChunk.objects.get(pk=scored.pk).heartbeat_at < timezone.now() - timedelta(seconds=60):
            assert time.monotonic() < deadline, "no heartbeat"
            time.sleep(0.05)
    # A later attempt's claim is not beaten for by the earlier one.
    RunChunk.objects.filter(pk=scored.pk).update(attempts=2, heartbeat_at=timezone.now() - timedelta(seconds=600))
    with runner.Heartbeat(RunChunk(pk=scored.pk, attempts=1)):
        time.sleep(0.3)
    assert RunChunk.objects.get(pk=scored.pk).heartbeat_at < timezone.now() - timedelta(seconds=500)


def test_beat_sweeps_often_enough_to_bring_a_chunk_back_within_a_minute():
    sweep = conf.CELERY_BEAT_SCHEDULE["reclaim-lost-chunks"]
    assert sweep["task"] == "modeleval.tasks.reclaim_lost_chunks"
    assert conf.CHUNK_HEARTBEAT_S < conf.CHUNK_LOST_AFTER_S
    assert conf.CHUNK_LOST_AFTER_S + sweep["schedule"] <= 60
