"""In the browser: a manager uploads a Label Studio project export on the upload page (a broken one first: the
error names the file, the task and the field) and downloads the campaign as a Label Studio project from its page;
the downloaded tasks carry every label."""
import json
from pathlib import Path

import pytest

from annotation.models import Annotation
from benchmarks.models import Item
from tests.benchmarks.test_labelstudio_import import tasks
from tests.reports.test_labelstudio import rich_benchmark

from .conftest import PASSWORD, expect, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOOK = Path("/work/shots/labelstudio")


def look(page, name):
    if LOOK.is_dir():
        page.screenshot(path=str(LOOK / f"{name}.png"), full_page=True)


def test_a_manager_uploads_a_label_studio_export_and_downloads_a_campaign_as_one(page, tmp_path):
    from django.contrib.auth.models import User

    User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    broken = tasks()
    broken[0]["annotations"][0]["result"][1]["value"]["rating"] = "four"
    (tmp_path / "broken-project.json").write_text(json.dumps(broken), encoding="utf-8")
    (tmp_path / "project-3.json").write_text(json.dumps(tasks()), encoding="utf-8")
    sign_in(page, "lead")
    page.goto("/manage/upload/")
    expect(page.locator("#formats tr[data-format='labelstudio']")).to_be_visible()
    page.set_input_files("#id_file", str(tmp_path / "broken-project.json"))
    page.fill("#id_new_benchmark", "ls-up")
    page.click("#upload-submit")
    expect(page.locator("#import-error")).to_contain_text(
        "broken-project.json:task 0 (id 101): field 'annotations[0].result[1].value.rating'")
    look(page, "upload-error")
    assert not Item.objects.filter(task__benchmark__slug="ls-up").exists()
    page.set_input_files("#id_file", str(tmp_path / "project-3.json"))
    page.fill("#id_new_benchmark", "ls-up")
    page.click("#upload-submit")
    page.wait_for_url("**/manage/?benchmark=ls-up")
    expect(page.locator(".messages")).to_contain_text("Imported project-3.json as labelstudio")
    look(page, "uploaded")
    assert Annotation.objects.filter(item__task__benchmark__slug="ls-up").count() == 3

    campaign = rich_benchmark(tmp_path)
    page.goto(f"/manage/campaigns/{campaign.pk}/")
    expect(page.locator("#labelstudio")).to_be_visible()
    shot(page, "manage-campaign-labelstudio", campaign.name, "#labelstudio-tasks")
    page.locator("#labelstudio").scroll_into_view_if_needed()
    look(page, "campaign-page")
    with page.expect_download() as info:
        page.click("#labelstudio-tasks")
    project = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert info.value.suggested_filename == f"labelstudio-campaign-{campaign.pk}-tasks.json"
    assert sum(len(t["annotations"]) for t in project) == 12 and len(project) == 5
    with page.expect_download() as info:
        page.click("#labelstudio-config")
    assert Path(info.value.path()).read_text(encoding="utf-8").startswith("<View>")
