import pytest
from rest_framework.test import APIClient

from modeleval import actions, runner
from modeleval.models import EvalRun, ModelSpec, Prediction, RunState

from .conftest import client_for
from .test_runs import fake_rows


@pytest.fixture
def spec(db):
    return ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)


def run_request(**extra):
    return {"model": "no-weights", "benchmark": "db-demo", "limit": 1, "chunk_size": 2, **extra}


@pytest.mark.parametrize("path", ["/api/v1/models/", "/api/v1/runs/", "/api/v1/predictions/"])
def test_annotators_and_anonymous_are_refused(annotator, path):
    assert APIClient().get(path).status_code in (401, 403)
    assert client_for(annotator).get(path).status_code == 403


def test_annotators_cannot_start_runs(annotator, spec, demo_benchmark):
    assert client_for(annotator).post("/api/v1/runs/", run_request(), format="json").status_code == 403
    assert not EvalRun.objects.exists()


def test_researcher_starts_a_run_and_reads_its_progress(researcher, spec, demo_benchmark, monkeypatch,
                                                        django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr("modeleval.tasks.score_chunk.apply_async", lambda args, queue: sent.append((args, queue)))
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/runs/", run_request(tasks=["emotion_detection", "offensive_detection"]),
                               format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    run = EvalRun.objects.get(pk=body["id"])
    assert body["state"] == "queued" and body["model"] == "no-weights" and body["created_by"] == "researcher"
    assert body["progress"] == {"items_done": 0, "items_total": 2, "chunks_done": 0, "chunks_total": 1, "fraction": 0.0,
                                "items_scoring": 0, "chunks_running": 0}
    # One message per chunk, on the gpu queue, sent only once the run was committed.
    assert sent == [((chunk_id,), "gpu") for chunk_id in run.chunks.values_list("pk", flat=True)]

    chunk = run.chunks.get()
    runner.claim_chunk(chunk.pk, "w1")
    runner.complete_chunk(chunk.pk, fake_rows(run, chunk))
    detail = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert detail["state"] == "finished" and detail["progress"]["fraction"] == 1.0
    assert [c["state"] for c in client.get(f"/api/v1/runs/{run.pk}/chunks/").json()["results"]] == ["done"]
    events = client.get(f"/api/v1/runs/{run.pk}/events/").json()["results"]
    assert [e["kind"] for e in events] == ["created", "started", "finished"]
    summary = client.get(f"/api/v1/runs/{run.pk}/summary/").json()
    assert set(summary["tasks"]) == {"emotion_detection", "offensive_detection"}


def test_refusals_carry_a_code(researcher, spec, demo_benchmark):
    response = client_for(researcher).post("/api/v1/runs/", run_request(mode="pairwise"), format="json")
    assert response.status_code == 400 and response.json()["code"] == "mode_unsuited"
    response = client_for(researcher).post("/api/v1/runs/", run_request(model="unknown"), format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid" and "model" in response.json()["errors"]


def test_cancel_through_the_api(researcher, spec, demo_benchmark):
    run = actions.start_run(model=spec, benchmark=demo_benchmark, limit=1, enqueue=False)
    client = client_for(researcher)
    response = client.post(f"/api/v1/runs/{run.pk}/cancel/", {"reason": "not needed"}, format="json")
    assert response.status_code == 200 and response.json()["state"] == RunState.CANCELLED
    again = client.post(f"/api/v1/runs/{run.pk}/cancel/", format="json")
    assert again.status_code == 409 and again.json()["code"] == "not_active"


def test_predictions_are_filtered_by_run_and_paginated(researcher, spec, demo_benchmark):
    runs = [actions.start_run(model=spec, benchmark=demo_benchmark, chunk_size=20, enqueue=False) for _ in range(2)]
    for run in runs:
        chunk = run.chunks.get()
        runner.claim_chunk(chunk.pk, "w1")
        runner.complete_chunk(chunk.pk, fake_rows(run, chunk))
    assert Prediction.objects.count() == 24
    page = client_for(researcher).get("/api/v1/predictions/", {"run": runs[0].pk, "limit": 5}).json()
    assert page["count"] == 12 and len(page["results"]) == 5 and page["next"]
    first = page["results"][0]
    assert first["run"] == runs[0].pk and first["options"][0]["continuation"].startswith(" ")
    assert {"answer", "answer_norm", "answer_per_token", "gold", "correct", "parse_status"} <= set(first)
    by_task = client_for(researcher).get("/api/v1/predictions/", {"run": runs[0].pk, "task": "dialogue_nli"}).json()
    assert by_task["count"] == 2


def test_only_staff_register_models(researcher, staff, tmp_path):
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"w")
    request = {"name": "tiny", "source": str(weights), "dtype": "float32"}
    assert client_for(researcher).post("/api/v1/models/", request, format="json").status_code == 403
    created = client_for(staff).post("/api/v1/models/", request, format="json")
    assert created.status_code == 201 and len(created.json()["sha256"]) == 64
    missing = client_for(staff).post("/api/v1/models/", {**request, "name": "gone", "source": str(tmp_path / "x")},
                                     format="json")
    assert missing.status_code == 400 and missing.json()["code"] == "model_source_missing"
    # An API model's fields on a local model are refused, not stored (nor a database error).
    key_env = client_for(staff).post("/api/v1/models/", {**request, "name": "odd", "api_key_env": "é­Ã"},
                                     format="json")
    assert key_env.status_code == 400 and key_env.json()["code"] == "bad_settings"
    assert [m["name"] for m in client_for(researcher).get("/api/v1/models/").json()["results"]] == ["tiny"]


def test_schema_documents_the_endpoints(staff):
    schema = client_for(staff).get("/api/schema/", {"format": "json"}).json()
    for path in ("/api/v1/models/", "/api/v1/runs/", "/api/v1/runs/{id}/", "/api/v1/runs/{id}/cancel/",
                 "/api/v1/runs/{id}/summary/", "/api/v1/predictions/"):
        assert path in schema["paths"], path
    assert "StartRun" in schema["components"]["schemas"]
