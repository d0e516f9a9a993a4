"""The upload form for a judge's verdicts made elsewhere, reached from the manager's and the researcher's pages:
an import, a malformed file refused with file, line and field and nothing written, the same file again adding
nothing, and the form closed to people who may not read gold."""
import json

from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Item
from modeleval.models import EvalRun, ModelSpec, Prediction

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
