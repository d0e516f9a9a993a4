"""The upload form for a judge's verdicts made elsewhere, reached from the manager's and the researcher's pages:
an import, a malformed file refused with file, line and field and nothing written, the same file again adding
nothing, and the form closed to people who may not read gold."""
import json

from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Item
from modeleval.models import EvalRun, ModelSpec, Prediction
from tests.annotation.conftest import dialogbench  # noqa: F401 -- fixture

VERDICTS = [{"item": "dq-001", "answer": 2}, {"item": "dq-002", "answer": 1}]


def upload(lines, name="judge.jsonl"):
    return SimpleUploadedFile(name, "".join(json.dumps(v) + "\n" for v in lines).encode(), "application/jsonl")


def post(client, diqad, lines, **extra):
    task = Item.objects.filter(task__benchmark__slug=diqad).first().task
    return client.post("/manage/verdicts/", {"file": upload(lines), "benchmark": diqad, "task": task.slug,
                                             "judge": "gpt-4o", "judge_settings": '{"temperature": 0}', **extra})


def test_the_form_is_reached_from_the_managers_and_researchers_pages(client, staff, diqad):
    client.force_login(staff)
    for page in ("/manage/", "/runs/"):
        assert 'href="/manage/verdicts/"' in client.get(page).content.decode()
    form = client.get("/manage/verdicts/").content.decode()
    assert 'id="verdicts-form"' in form and 'name="judge_settings"' in form


def test_an_upload_imports_once(client, staff, diqad):
    client.force_login(staff)
    response = post(client, diqad, VERDICTS)
    assert response.status_code == 302
    run = EvalRun.objects.get()
    assert run.model.name == "gpt-4o" and run.settings["judge_settings"] == {"temperature": 0}
    assert run.created_by == staff and run.predictions.count() == 2
    page = client.get(response["Location"]).content.decode()
    assert f"Imported 2 verdicts of gpt-4o as run {run.pk}." in page
    again = post(client, diqad, VERDICTS)
    assert again.status_code == 302 and EvalRun.objects.count() == 1 and Prediction.objects.count() == 2
    assert "nothing was added" in client.get(again["Location"]).content.decode()


def test_a_malformed_file_writes_nothing_and_says_where(client, staff, diqad):
    client.force_login(staff)
    response = post(client, diqad, [VERDICTS[0], {"item": "dq-002", "answer": "great"}])
    page = response.content.decode()
    assert response.status_code == 400 and 'id="import-error"' in page
    assert "<dd>judge.jsonl</dd>" in page and "<dd>line 2</dd>" in page and "<dd>answer</dd>" in page
    assert not EvalRun.objects.exists() and not ModelSpec.objects.filter(name="gpt-4o").exists()
    bad_settings = post(client, diqad, VERDICTS, judge_settings="[1]")
    assert bad_settings.status_code == 400 and "must be a JSON object" in bad_settings.content.decode()


def test_only_people_who_read_gold_import_verdicts(client, people, diqad):
    client.force_login(people["ann1"])
    assert client.get("/manage/verdicts/").status_code == 403
    assert post(client, diqad, VERDICTS).status_code == 403 and not EvalRun.objects.exists()


# --- other tools' files: lm-evaluation-harness samples and Inspect logs; the benchmark's lm-eval task ---------

def lmeval_samples(benchmark):
    """A samples file as lm-eval writes one, for the emotion items of the exported task (the first option wins)."""
    from modeleval.lmeval import build_export

    files = build_export(benchmark, tasks=["emotion_detection"]).files
    docs = [json.loads(line) for line in files["hb_db_demo_emotion_detection.jsonl"].splitlines()]
    lines = [{"doc_id": n, "doc": d, "target": str(d["gold"]),
              "arguments": {f"gen_args_{i}": {"arg_0": d["prompt"], "arg_1": " " + c}
                            for i, c in enumerate(d["choices"])},
              "filtered_resps": [[str(-1.0 - i), "False"] for i in range(len(d["choices"]))]}
             for n, d in enumerate(docs)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_lmeval_samples_and_inspect_logs_upload_on_the_same_form(client, staff, dialogbench):
    client.force_login(staff)
    form = client.get("/manage/verdicts/").content.decode()
    assert 'name="format"' in form and 'value="lm-eval"' in form and 'value="inspect"' in form
    samples = SimpleUploadedFile("samples_hb_db_demo_emotion_detection.jsonl", lmeval_samples(dialogbench))
    response = client.post("/manage/verdicts/", {"format": "lm-eval", "file": samples, "benchmark": dialogbench,
                                                 "judge": "smollm2-lm-eval", "judge_settings": "{}"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    run = EvalRun.objects.get()
    assert run.mode == "loglikelihood" and run.predictions.count() == 3
    assert set(run.predictions.values_list("answer", flat=True)) == {"A"}
    log = {"status": "success", "eval": {"task": "t", "model": "mockllm/model", "scorers": [{"name": "match"}]},
           "samples": [{"id": "db-en-ed-001", "epoch": 1, "scores": {"match": {"value": "C", "answer": "B"}},
                        "output": {"completion": "ANSWER: B"}},
                       {"id": "elsewhere-7", "epoch": 1, "scores": {}, "output": {"completion": ""}}]}
    refused = client.post("/manage/verdicts/", {"format": "inspect", "benchmark": dialogbench, "judge_settings": "{}",
                                                "file": SimpleUploadedFile("run.json", json.dumps(log).encode())})
    page = refused.content.decode()
    assert refused.status_code == 400 and "<dd>run.json</dd>" in page and "<dd>samples[].id</dd>" in page
    assert "1 match none: &#x27;elsewhere-7&#x27;" in page and EvalRun.objects.count() == 1
    log["samples"].pop()
    done = client.post("/manage/verdicts/", {"format": "inspect", "benchmark": dialogbench, "judge_settings": "{}",
                                             "file": SimpleUploadedFile("run.json", json.dumps(log).encode())})
    assert done.status_code == 302 and EvalRun.objects.count() == 2
    assert EvalRun.objects.first().predictions.get().answer == "B"


def test_the_benchmark_row_offers_its_lm_eval_task(client, staff, people, dialogbench):
    import io
    import zipfile

    client.force_login(staff)
    home = client.get("/manage/").content.decode()
    assert f'action="/manage/benchmarks/{dialogbench}/lm-eval/"' in home and 'value="dialogbench"' in home
    response = client.get(f"/manage/benchmarks/{dialogbench}/lm-eval/?preset=dialogbench")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert "hb_db_demo_all/hb_db_demo_all.yaml" in names and "hb_db_demo_all/README.md" in names
    bad = client.get(f"/manage/benchmarks/{dialogbench}/lm-eval/?preset=nonesuch")
    assert bad.status_code == 302
    client.force_login(people["ann1"])
    assert client.get(f"/manage/benchmarks/{dialogbench}/lm-eval/").status_code == 403
