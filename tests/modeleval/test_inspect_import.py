"""Inspect eval logs, written by inspect_ai itself (its own mock model and pattern scorer, in its own venv:
perf/_target_venvs.py inspect), imported as model or judge runs on the matching items; samples matching no item
refused with their ids; malformed logs write nothing and name file, sample and field; importing twice adds nothing."""
import io
import json
import subprocess
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.importers import ImportFailure
from modeleval.inspect_log import import_inspect_log
from modeleval.models import EvalRun, ModelSpec, ParseStatus, Prediction
from perf._target_venvs import python_of
from tests.annotation.conftest import dialogbench, diqad  # noqa: F401 -- fixtures

INSPECT = python_of("inspect")
WRITER = Path(__file__).with_name("inspect_log_writer.py")
# Emotion items of the DialogBench demo: gold B, C, A. The third reply gives no answer the pattern reads.
EMOTION = [("db-en-ed-001", "ANSWER: B"), ("db-en-ed-002", "ANSWER: A"), ("db-en-ed-003", "I cannot tell"),
           ("db-en-ic-001", "ANSWER: Z")]
SPECS = {
    "emotion": {"task": "hb_emotion", "format": "json", "samples": [
        {"id": i, "input": f"Item {i}: which option?", "target": "A", "reply": r} for i, r in EMOTION]},
    "strangers": {"task": "hb_strangers", "format": "json", "samples": [
        {"id": i, "input": "Which option?", "target": "A", "reply": "ANSWER: A"}
        for i in ("db-en-ed-001", "not-ours-1", "not-ours-2")]},
    "ratings": {"task": "hb_quality", "format": "json", "samples": [
        {"id": "dq-001", "input": "Rate it.", "target": "2", "reply": "ANSWER: 2"},
        {"id": "dq-002", "input": "Rate it.", "target": "1", "reply": "ANSWER: 1.5"}]},
    "zipped": {"task": "hb_zipped", "format": "eval", "samples": [
        {"id": "db-en-ed-001", "input": "Which option?", "target": "B", "reply": "ANSWER: B"}]},
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """{name: path} of the logs inspect_ai writes for SPECS (one process for all: it takes a while to start)."""
    if not INSPECT.is_file():
        reason = (f"inspect_ai venv absent at {INSPECT.parent.parent} (build it with "
                  "`python perf/_target_venvs.py inspect`, or set HB_INSPECT_VENV)")
        print(reason)
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("inspect")
    (folder / "specs.json").write_text(json.dumps(list(SPECS.values())))
    done = subprocess.run([str(INSPECT), str(WRITER), str(folder / "specs.json"), str(folder / "logs")],
                          capture_output=True, text=True, timeout=900, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    paths = done.stdout.strip().splitlines()[-len(SPECS):]
    return dict(zip(SPECS, paths, strict=True))


def counts():
    return EvalRun.objects.count(), Prediction.objects.count(), ModelSpec.objects.count()


def test_a_log_written_by_inspect_imports_as_a_run_once(logs, dialogbench):  # noqa: F811
    out = io.StringIO()
    call_command("import_verdicts", logs["emotion"], "--format", "inspect", "--benchmark", dialogbench, stdout=out)
    run = EvalRun.objects.get()
    assert run.mode == "generate" and run.model.name == "mockllmmodel"  # the log's model, mockllm/model
    imported = run.settings["imported"]
    assert (imported["format"], imported["task"], imported["model"], imported["scorer"]) == (
        "inspect", "hb_emotion", "mockllm/model", "pattern")
    rows = {p.item.external_id: p for p in Prediction.objects.filter(run=run).select_related("item")}
    assert {i: (p.answer, p.parse_status, p.correct) for i, p in rows.items()} == {
        "db-en-ed-001": ("B", ParseStatus.PARSED, True),
        "db-en-ed-002": ("A", ParseStatus.PARSED, False),
        "db-en-ed-003": ("", ParseStatus.UNPARSABLE, False),  # no answer read: wrong, as an unparsable reply
        "db-en-ic-001": ("", ParseStatus.UNPARSABLE, False),  # "Z" is none of the item's options
    }
    assert rows["db-en-ed-003"].raw_output == "I cannot tell"
    assert sorted(run.tasks.values_list("slug", flat=True)) == ["emotion_detection", "intent_classification"]
    before = counts()
    call_command("import_verdicts", logs["emotion"], "--format", "inspect", "--benchmark", dialogbench, stdout=out)
    assert counts() == before and "nothing added" in out.getvalue()


def test_a_judges_ratings_are_read_on_the_scale(logs, diqad):  # noqa: F811
    run = import_inspect_log(logs["ratings"], benchmark=diqad, judge="rater via inspect").run
    assert run.mode == "rating" and run.model.name == "rater-via-inspect"
    assert sorted(run.predictions.values_list("answer", "rating")) == [("1.5", 1.5), ("2", 2.0)]


def test_samples_matching_no_item_are_refused_with_their_ids(logs, dialogbench):  # noqa: F811
    before = counts()
    with pytest.raises(CommandError, match=r"field 'samples\[\]\.id'.* 2 match none: 'not-ours-1', 'not-ours-2'"):
        call_command("import_verdicts", logs["strangers"], "--format", "inspect", "--benchmark", dialogbench)
    assert counts() == before


def test_a_zstd_eval_log_is_refused_with_the_conversion(logs, dialogbench):  # noqa: F811
    before = counts()
    with pytest.raises(ImportFailure, match="inspect log convert --to json"):
        import_inspect_log(logs["zipped"], benchmark=dialogbench)
    assert counts() == before


@pytest.mark.parametrize("breaking, where", [
    (lambda log: log.update(status="error"), "field 'status'"),
    (lambda log: log.pop("samples"), "field 'samples'"),
    (lambda log: log["eval"].pop("model"), "field 'eval.model'"),
    (lambda log: log["samples"][1].update(id=["db-en-ed-002"]), "sample 2: field 'id'"),
    (lambda log: log["samples"][1].update(scores=[]), "sample 'db-en-ed-002': field 'scores'"),
    (lambda log: log["samples"][1]["output"].update(completion=7), "sample 'db-en-ed-002': field 'output.completion'"),
    (lambda log: log["samples"].append(dict(log["samples"][0])), "sample 'db-en-ed-001': field 'id'"),
])
def test_a_malformed_log_writes_nothing_and_names_sample_and_field(logs, dialogbench, tmp_path, breaking,  # noqa: F811
                                                                  where):
    log = json.loads(Path(logs["emotion"]).read_text())
    log["samples"].sort(key=lambda s: s["id"])
    breaking(log)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(log))
    before = counts()
    with pytest.raises(ImportFailure) as refused:
        import_inspect_log(path, benchmark=dialogbench, name="broken.json")
    assert counts() == before
    assert str(refused.value).startswith("broken.json") and where in str(refused.value), str(refused.value)
