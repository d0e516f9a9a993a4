"""The runs page's list: newest run first, and a run's progress moving while a chunk is scored (the worker
commits the items it has scored step by step), without a model."""
import sys
from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

import modeleval
from modeleval import actions, runner, selectors
from modeleval.models import ChunkState, EvalRun, ModelSpec, RunState
from modeleval.serializers import EvalRunSerializer

from .test_runs import fake_rows


@pytest.fixture
def spec(db):
    return ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)


def start(spec, benchmark, **kwargs):
    return actions.start_run(model=spec, benchmark=benchmark, enqueue=False, **kwargs)


def test_runs_are_listed_newest_first(spec, demo_benchmark, researcher):
    started = [start(spec, demo_benchmark, limit=1).pk for _ in range(4)]
    client = APIClient()
    client.force_authenticate(researcher)
    listed = [run["id"] for run in client.get("/api/v1/runs/?limit=20").json()["results"]]
    assert listed == sorted(started, reverse=True)


def test_progress_moves_in_steps_while_a_chunk_is_scored(spec, demo_benchmark, monkeypatch):
    run = start(spec, demo_benchmark, limit=4, chunk_size=16, tasks=["emotion_detection", "dialogue_nli"])
    n = run.items_total
    assert run.chunks_total == 1 and n >= 5
    seen = []

    def score_items(run, items):
        shown = EvalRunSerializer(selectors.runs().get(pk=run.pk)).data["progress"]
        seen.append((shown["items_done"] + shown["items_scoring"], shown["fraction"]))
        return fake_rows(run, SimpleNamespace(item_ids=[item.pk for item in items]))

    fake = SimpleNamespace(score_items=score_items, PermanentError=type("PermanentError", (Exception,), {}))
    monkeypatch.setitem(sys.modules, "modeleval.inference", fake)
    monkeypatch.setattr(modeleval, "inference", fake, raising=False)
    chunk = run.chunks.get()
    assert runner.process_chunk(chunk.pk, "test") == "done"
    # Steps of 2 items: the page saw 0, 2, 4, ... scored while the one chunk ran, then all of them.
    assert seen == [(k, k / n) for k in range(0, n, 2)]
    run = selectors.runs().get(pk=run.pk)
    assert run.state == RunState.FINISHED and EvalRunSerializer(run).data["progress"]["fraction"] == 1.0
    assert run.chunks.get().state == ChunkState.DONE and EvalRun.objects.get(pk=run.pk).items_done == n
