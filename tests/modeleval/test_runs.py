"""Runs, chunks and predictions without a model: constraints, idempotent writes, cancel, poison chunks."""
import hashlib
import io
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from benchmarks.models import Item
from modeleval import actions, runner, selectors
from modeleval.models import ChunkState, EvalRun, ModelSpec, ParseStatus, Prediction, RunChunk, RunState
from tests.conftest import ROOT


@pytest.fixture
def spec(db):
    # A spec row only: these tests never load weights.
    return ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)


def start(spec, benchmark, **kwargs):
    return actions.start_run(model=spec, benchmark=benchmark, enqueue=False, **kwargs)


def fake_rows(run, chunk):
    """Prediction fields as a scorer would produce them, with numbers made up."""
    rows = []
    for item in Item.objects.filter(pk__in=chunk.item_ids):
        options = [{"key": k, "source_key": k, "text": t, "context": "ctx", "continuation": " " + t,
                    "logprob": -float(len(t)), "n_tokens": 1, "n_chars": len(t), "is_greedy": False}
                   for k, t in item.fields["options"].items()]
        picks = selectors.mc_picks(options)
        gold = item.source_gold["answer"]
        rows.append({"item": item, "variant": "", "gold": gold, "options": options, "answer": picks["per_token"],
                     "answer_norm": picks["acc_norm"], "answer_per_token": picks["per_token"],
                     "parse_status": ParseStatus.SCORED, "correct": picks["per_token"] == gold})
    return rows


def test_run_is_cut_into_chunks_with_counters(spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=2, chunk_size=3, tasks=["emotion_detection", "dialogue_nli"])
    assert (run.state, run.items_total, run.chunks_total) == (RunState.QUEUED, 4, 2)
    chunks = list(run.chunks.order_by("index"))
    assert [len(c.item_ids) for c in chunks] == [3, 1]
    assert {t.slug for t in run.tasks.all()} == {"emotion_detection", "dialogue_nli"}
    assert run.prompt_version == "mc-loglikelihood-text-en/1" and len(run.prompt_sha256) == 64
    assert run.settings["continuation"] == "text" and run.settings["rule"] == "per_token"
    assert run.events.get().kind == "created"


def test_states_and_counters_are_checked_by_the_database(spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=1)
    for bad in ({"state": "paused"}, {"items_done": run.items_total + 1}, {"mode": "vibes"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            EvalRun.objects.filter(pk=run.pk).update(**bad)
    with pytest.raises(IntegrityError), transaction.atomic():
        RunChunk.objects.filter(run=run).update(state="lost")


@pytest.mark.parametrize("kwargs, code", [
    ({"mode": "pairwise"}, "mode_unsuited"),  # no two-conversation question
    ({"mode": "rating"}, "mode_unsuited"),
    ({"tasks": ["no_such_task"]}, "unknown_task"),
    ({"settings": {"continuation": "word"}}, "bad_settings"),
    ({"settings": {"temprature": 0}}, "bad_settings"),
    ({"item_ids": [0]}, "no_items"),
    ({"position_policy": "circular"}, "bad_settings"),  # option texts scored without showing the options
])
def test_start_run_refuses_with_a_code(spec, demo_benchmark, kwargs, code):
    with pytest.raises(actions.RunError) as refused:
        start(spec, demo_benchmark, **kwargs)
    assert refused.value.code == code
    assert not EvalRun.objects.exists()


def test_prediction_writes_are_idempotent(spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=1, chunk_size=10)
    chunk = run.chunks.get()
    runner.claim_chunk(chunk.pk, "w1")
    rows = fake_rows(run, chunk)
    runner.write_predictions(run, chunk, rows)
    first = {p.pk: (p.answer, p.options, p.created_at) for p in Prediction.objects.filter(run=run)}
    runner.write_predictions(run, chunk, rows)  # the same rows again: nothing added, nothing changed
    assert {p.pk: (p.answer, p.options, p.created_at) for p in Prediction.objects.filter(run=run)} == first

    rows[0]["answer"] = "Z"  # a re-scored row replaces the stored one in place
    runner.write_predictions(run, chunk, rows)
    assert Prediction.objects.filter(run=run).count() == len(rows) == 5
    assert Prediction.objects.get(run=run, item=rows[0]["item"]).answer == "Z"
    with pytest.raises(IntegrityError), transaction.atomic():
        Prediction.objects.create(run=run, item=rows[0]["item"], variant="", parse_status=ParseStatus.SCORED)


def test_a_chunk_completed_twice_counts_once_and_finishes_the_run(spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=1, chunk_size=3)
    first, second = run.chunks.order_by("index")
    for chunk in (first, second):
        runner.claim_chunk(chunk.pk, "w1")
    assert runner.complete_chunk(first.pk, fake_rows(run, first))
    assert not runner.complete_chunk(first.pk, fake_rows(run, first))  # a repeated delivery
    run.refresh_from_db()
    assert (run.state, run.chunks_done, run.items_done) == (RunState.RUNNING, 1, 3)
    assert runner.complete_chunk(second.pk, fake_rows(run, second))
    run.refresh_from_db()
    assert (run.state, run.chunks_done, run.items_done) == (RunState.FINISHED, 2, 5)
    assert Prediction.objects.filter(run=run).count() == 5
    assert run.events.filter(kind="finished").count() == 1
    assert runner.claim_chunk(first.pk, "w2") is None  # done chunks are never claimed again


def test_stored_options_give_back_the_stored_answers(spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=1, chunk_size=10)
    chunk = run.chunks.get()
    runner.claim_chunk(chunk.pk, "w1")
    runner.complete_chunk(chunk.pk, fake_rows(run, chunk))
    summary = selectors.run_summary(run)
    for p in Prediction.objects.filter(run=run):
        picks = selectors.mc_picks(p.options)
        assert (picks["per_token"], picks["acc_norm"]) == (p.answer_per_token, p.answer_norm)
    assert set(summary["tasks"]) == {t.slug for t in run.tasks.all()}


def test_cancel_skips_pending_chunks_and_running_ones_exit_early(spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=1, chunk_size=2)
    running, *pending = run.chunks.order_by("index")
    assert runner.claim_chunk(running.pk, "w1")
    run = actions.cancel_run(run, reason="wrong prompt")
    assert (run.state, run.reason) == (RunState.CANCELLED, "wrong prompt") and run.finished_at
    assert {c.state for c in RunChunk.objects.filter(pk__in=[c.pk for c in pending])} == {ChunkState.SKIPPED}
    assert runner.process_chunk(pending[0].pk, "w2") == "skipped"  # a message still in the queue
    # The chunk being scored when the run was cancelled keeps its work, but the run stays cancelled.
    runner.complete_chunk(running.pk, fake_rows(run, running))
    run.refresh_from_db()
    assert run.state == RunState.CANCELLED and run.chunks_done == 1
    with pytest.raises(actions.RunError) as refused:
        actions.cancel_run(run)
    assert refused.value.code == "not_active"
    assert list(run.events.values_list("kind", flat=True)) == ["created", "started", "cancelled"]


def broken_item(benchmark):
    task = benchmark.tasks.get(slug="emotion_detection")
    # Imported through the ORM, bypassing the importer's checks: no options to score.
    return Item.objects.create(task=task, external_id="zz-broken", dialogue=[{"speaker": "a", "text": "hi"}],
                               fields={"question": "?"}, source_gold={"answer": "A"})


def test_poison_chunk_stops_after_max_attempts_and_fails_the_run(spec, demo_benchmark):
    item = broken_item(demo_benchmark)
    good = demo_benchmark.tasks.get(slug="dialogue_nli").items.values_list("pk", flat=True)
    run = start(spec, demo_benchmark, item_ids=[item.pk, *good], chunk_size=1, max_attempts=3)
    poison = run.chunks.get(item_ids=[item.pk])
    outcomes = []
    for _ in range(3):
        try:
            outcomes.append(runner.process_chunk(poison.pk, "w1"))
        except runner.RetryChunk as retry:
            outcomes.append(f"retry in {retry.countdown}")
    assert outcomes == [f"retry in {runner.RETRY_DELAY_S}", f"retry in {2 * runner.RETRY_DELAY_S}", "failed"]
    poison.refresh_from_db()
    run.refresh_from_db()
    assert (poison.state, poison.attempts) == (ChunkState.FAILED, 3)
    assert run.state == RunState.FAILED
    assert "chunk" in run.reason and "after 3 attempts" in run.reason and "zz-broken" in run.reason
    assert "fields.options" in run.reason
    assert set(run.chunks.exclude(pk=poison.pk).values_list("state", flat=True)) == {ChunkState.SKIPPED}
    assert run.events.filter(kind="chunk_attempt_failed").count() == 2


def test_deliveries_that_never_report_back_use_up_the_attempts(spec, demo_benchmark):
    # A chunk whose worker is killed every time (out of memory, say) never raises: each delivery
    # claims an attempt, and the one after the last is refused.
    run = start(spec, demo_benchmark, limit=1, chunk_size=10, max_attempts=2)
    chunk = run.chunks.get()
    assert runner.claim_chunk(chunk.pk, "w1") and runner.claim_chunk(chunk.pk, "w2")
    assert runner.claim_chunk(chunk.pk, "w3") is None
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert (chunk.state, chunk.attempts, run.state) == (ChunkState.FAILED, 2, RunState.FAILED)
    assert "2 attempts already started and none finished" in run.reason
    assert run.events.filter(kind="chunk_retried").get().figures["attempt"] == 2


def test_model_files_are_pinned_by_hash(db, tmp_path):
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"weights")
    spec = actions.register_model("tiny", str(weights))
    assert spec.sha256 == hashlib.sha256(b"weights").hexdigest()
    with pytest.raises(actions.RunError) as refused:
        actions.register_model("missing", str(tmp_path / "none.gguf"))
    assert refused.value.code == "model_source_missing"


def test_score_command_starts_a_run_for_the_workers(packaged, demo_benchmark, monkeypatch,
                                                    django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr("modeleval.tasks.score_chunk.apply_async", lambda args, queue: sent.append(args))
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("score", "--model", packaged.name, "--benchmark", "db-demo", "--task", "dialogue_nli",
                     "--set", "continuation=letter", "--chunk-size", "1", "--no-wait", stdout=out)
    run = EvalRun.objects.get()
    assert (run.state, run.chunks_total, run.settings["continuation"]) == (RunState.QUEUED, 2, "letter")
    assert run.prompt_version == "mc-loglikelihood-letter-en/1"
    assert sorted(sent) == sorted((pk,) for pk in run.chunks.values_list("pk", flat=True))
    with pytest.raises(CommandError, match="no model 'gpt-9'"):
        call_command("score", "--model", "gpt-9", "--benchmark", "db-demo", stdout=out)


def test_admin_shows_runs_with_their_chunks(admin_client, spec, demo_benchmark):
    run = start(spec, demo_benchmark, limit=1, chunk_size=2)
    assert admin_client.get("/admin/modeleval/evalrun/").status_code == 200
    page = admin_client.get(f"/admin/modeleval/evalrun/{run.pk}/change/").content.decode()
    assert "Run chunks" in page and page.count("Pending") >= run.chunks_total
    assert admin_client.get("/admin/modeleval/prediction/").status_code == 200
    assert admin_client.get("/admin/modeleval/modelspec/add/").status_code == 200


def test_the_worker_parent_never_imports_torch():
    # The Celery parent forks its pool after loading every task module: torch (and with it CUDA)
    # must wait for the first chunk in the pool process.
    code = ("import sys, django; from config.celery import app; django.setup(); app.loader.import_default_modules(); "
            "import modeleval.tasks, modeleval.api, modeleval.admin, modeleval.runner; "
            "sys.exit('torch' in sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120,
                   env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"})
