"""Other tools' runs on the manager's pages, in Chromium: the benchmark's row downloads its lm-eval task (a zip of
the task folder, prompted by the study preset chosen), the verdicts form imports lm-eval's samples as a run, and an
Inspect log whose samples match no item is refused with their ids, nothing written."""
import json
import zipfile

import pytest

from benchmarks.actions import import_items
from modeleval.models import EvalRun
from tests.conftest import DEMO_DATA

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lmeval_task_download_and_outside_runs_upload(page, tmp_path):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    boss = make_user("boss")
    boss.is_staff = True
    boss.save()
    sign_in(page, "boss")
    page.goto("/manage/")
    row = page.locator("#benchmarks tr[data-slug='db-demo']")
    row.locator("select[name='preset']").select_option("dialogbench")
    shot(page, "manage-lmeval-download", "Manage", "#benchmarks tr[data-slug='db-demo'] .lmeval-export")
    with page.expect_download() as download:
        row.get_by_role("button", name="Download as an lm-eval task").click()
    assert download.value.suggested_filename == "hb_db_demo_all.zip"
    archive = zipfile.ZipFile(download.value.path())
    docs = [json.loads(line) for line in
            archive.read("hb_db_demo_all/hb_db_demo_emotion_detection.jsonl").decode().splitlines()]
    assert len(docs) == 3 and all(d["prompt"].endswith("【Answer】") for d in docs)  # DialogBench's own prompt

    samples = tmp_path / "samples_hb_db_demo_emotion_detection_2026.jsonl"
    samples.write_text("".join(json.dumps({
        "doc_id": n, "doc": d, "arguments": {f"gen_args_{i}": {"arg_0": d["prompt"], "arg_1": c}
                                             for i, c in enumerate(d["choices"])},
        "filtered_resps": [[str(-2.0 - i), "False"] for i in range(len(d["choices"]))]}) + "\n"
        for n, d in enumerate(docs)))
    page.goto("/manage/verdicts/")
    page.select_option("#id_format", "lm-eval")
    page.set_input_files("#id_file", str(samples))
    page.select_option("#id_benchmark", "db-demo")
    page.fill("#id_judge", "smollm2-lm-eval")
    page.click("#verdicts-submit")
    expect(page.get_by_text("Imported 3 verdicts of smollm2-lm-eval")).to_be_visible()
    assert EvalRun.objects.get().mode == "loglikelihood"

    log = tmp_path / "inspect-run.json"
    log.write_text(json.dumps({"status": "success", "eval": {"task": "t", "model": "mockllm/model"}, "samples": [
        {"id": i, "epoch": 1, "scores": {"match": {"answer": "A"}}, "output": {"completion": "ANSWER: A"}}
        for i in ("db-en-ed-001", "their-17", "their-18")]}))
    page.select_option("#id_format", "inspect")
    page.set_input_files("#id_file", str(log))
    page.select_option("#id_benchmark", "db-demo")
    page.click("#verdicts-submit")
    error = page.locator("#import-error")
    expect(error).to_contain_text("2 match none: 'their-17', 'their-18'")
    expect(error).to_contain_text("samples[].id")
    assert EvalRun.objects.count() == 1
    shot(page, "verdicts-inspect-refused", "Import a judge's verdicts", "#import-error")
