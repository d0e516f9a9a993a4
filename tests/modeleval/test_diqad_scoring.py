"""DiQAD's choice questions scored by a model: the quality (2/1/0) by score-token probabilities and by
generation read back from "score: N", needs_verification by yes/no; the demo campaign's report row."""
import json

import pytest
from django.core.management import call_command

from annotation.models import Campaign
from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import runner
from modeleval.models import EvalRun, ParseStatus, Prediction, RunState
from reports.render.tables import diqad_tables
from reports.build import public
from reports.service import make_report
from tests.conftest import DEMO_DATA

from .test_scoring import sync_run

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture
def diqad(db):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq")
    return Benchmark.objects.get(slug="dq")


def test_quality_by_score_probabilities_with_diqad_prompt(packaged, diqad):
    run = sync_run(packaged, diqad, mode="rating", settings={"preset": "diqad", "fewshot": {"strategy": "random",
                                                                                          "k": 2}})
    assert run.prompt_version == "diqad-quality-fewshot-en/1"
    rows = list(Prediction.objects.filter(run=run))
    assert len(rows) == 8
    for row in rows:
        assert row.answer in {"0", "1", "2"} and set(row.probabilities["raw"]) == {"0", "1", "2"}
        assert 0 <= row.rating <= 2 and len(row.fewshot_ids) == 2 and row.item.external_id not in row.fewshot_ids
        blocks = row.prompt.split("\n\n")
        assert blocks[0].startswith("You are an expert in assessing the quality of dialogues")
        shot = blocks[-2]
        assert shot.startswith("dialogue: [{") and shot.rsplit("\n", 1)[1] in {"score: 0", "score: 1", "score: 2"}
        query = blocks[-1]
        assert query.endswith("\nscore:")
        turns = json.loads(query[len("dialogue: "):-len("\nscore:")])
        assert turns[0]["role"] == "user" and turns[1]["role"] == "assistant"
        assert turns[0]["content"] == row.item.dialogue[0]["text"]


def test_quality_by_generation_and_verification_by_yes_no(packaged, diqad):
    run = sync_run(packaged, diqad, mode="rating", settings={"preset": "diqad", "read": "generation"})
    rows = list(Prediction.objects.filter(run=run))
    assert len(rows) == 8 and all(r.raw_output for r in rows)
    for row in rows:
        if row.parse_status == ParseStatus.PARSED:
            assert row.answer in {"0", "1", "2"} and row.rating == float(row.answer)
        else:
            assert row.parse_status == ParseStatus.UNPARSABLE and row.answer == "" and row.rating is None
    run = sync_run(packaged, diqad, mode="yes_no", settings={"preset": "diqad", "quality": "needs_verification"})
    rows = list(Prediction.objects.filter(run=run))
    assert run.prompt_version == "diqad-verification-fewshot-en/1"
    assert {r.answer for r in rows} <= {"yes", "no"} and all(0 <= r.rating <= 1 for r in rows)
    assert all(r.gold in {"yes", "no"} and r.prompt.endswith("\nneeds verification:") for r in rows)


def test_demo_queues_its_run_and_the_campaign_report_has_a_model_row_once_scored(
        packaged, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr("modeleval.tasks.score_chunk.apply_async", lambda args, queue: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", "--fed", str(tmp_path / "absent.json"))
    [run] = EvalRun.objects.filter(benchmark__slug="diqad-demo")
    [chunk_id] = run.chunks.values_list("pk", flat=True)
    assert run.state == RunState.QUEUED and not Prediction.objects.filter(run=run).exists()  # scored by the worker
    assert sent == [(chunk_id,)]
    # A worker took the chunk and was stopped with it (the embedded broker keeps no message it handed out): the
    # next start sends the chunk again and adds no run.
    runner.claim_chunk(chunk_id, "stopped-worker")
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", "--fed", str(tmp_path / "absent.json"))
    assert list(EvalRun.objects.filter(benchmark__slug="diqad-demo")) == [run] and sent == [(chunk_id,)]
    assert runner.process_chunk(chunk_id, "worker") == "done"  # what the worker does with the message
    run.refresh_from_db()
    assert run.state == RunState.FINISHED
    campaign = Campaign.objects.get(benchmark__slug="diqad-demo")
    report = public(make_report("diqad-demo", campaign.pk))
    rows = [r for r in report["ratings"]["models"] if r["quality"] == "score"]
    assert len(rows) == 1 and rows[0]["model"].startswith(packaged.name) and rows[0]["n_gold"] == 8
    for key in ("gold_accuracy", "gold_uar", "gold_kappa", "gold_spearman", "gold_pearson", "gold_precision",
                "gold_recall", "gold_f1"):
        assert key in rows[0]
    table = diqad_tables(report)[0]
    print("\n" + " | ".join(table.header) + "\n" + " | ".join(c.text() for c in table.rows[0]))
    assert table.rows[0][1].text() == f"{100 * rows[0]['gold_accuracy']:.2f}"
