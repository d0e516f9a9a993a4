"""The manager's pages speak Label Studio: a project export uploaded on the upload page comes in with each
annotator's labels, and the campaign page hands out the campaign as a Label Studio project (tasks and config) to
those who read its report, no one else."""
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Annotation
from benchmarks.models import Item
from tests.benchmarks.test_labelstudio_import import tasks
from tests.reports.factories import staff
from tests.reports.test_labelstudio import rich_benchmark

pytestmark = pytest.mark.django_db


def test_an_upload_of_a_label_studio_export_brings_its_labels_and_a_broken_one_nothing(client):
    client.force_login(staff())
    response = client.post("/manage/upload/", {
        "file": SimpleUploadedFile("project-3.json", json.dumps(tasks()).encode()), "new_benchmark": "ls-up",
        "format": ""})
    assert response.status_code == 302, response.content.decode()[-2000:]
    page = client.get(response["Location"]).content.decode()
    assert "Imported project-3.json as labelstudio" in page and "3 annotations of 2 external raters" in page
    assert "1 ratings missing (cancelled annotations)" in page
    assert Annotation.objects.filter(item__task__benchmark__slug="ls-up").count() == 3
    broken = tasks()
    broken[1]["annotations"][1]["result"][0]["from_name"] = 7
    response = client.post("/manage/upload/", {
        "file": SimpleUploadedFile("broken.json", json.dumps(broken).encode()), "new_benchmark": "ls-bad",
        "format": "labelstudio"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "broken.json:task 1 (id 102): field &#x27;annotations[1].result[0].from_name&#x27;" in body
    assert not Item.objects.filter(task__benchmark__slug="ls-bad").exists()


def test_the_campaign_page_hands_out_the_project_to_its_report_readers_only(client, tmp_path):
    campaign = rich_benchmark(tmp_path)
    client.force_login(staff())
    page = client.get(f"/manage/campaigns/{campaign.pk}/").content.decode()
    assert 'id="labelstudio-tasks"' in page
    got = client.get(f"/manage/campaigns/{campaign.pk}/labelstudio/tasks/")
    assert got.status_code == 200 and got["Content-Disposition"].endswith('-tasks.json"')
    project = json.loads(got.content)
    assert sum(len(t["annotations"]) for t in project) == 12
    config = client.get(f"/manage/campaigns/{campaign.pk}/labelstudio/config/")
    assert config.status_code == 200 and config.content.decode().startswith("<View>")
    assert client.get(f"/manage/campaigns/{campaign.pk}/labelstudio/secrets/").status_code == 404
    client.force_login(User.objects.create_user("outsider"))
    assert client.get(f"/manage/campaigns/{campaign.pk}/labelstudio/tasks/").status_code in (403, 404)
