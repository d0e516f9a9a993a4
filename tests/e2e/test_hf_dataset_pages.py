"""A manager in Chromium downloads a benchmark as a Hugging Face dataset from the report page and uploads the zip on
the upload page as a new benchmark; a broken dataset is refused on the page, naming its file, row and field."""
import io
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation.models import Annotation, Membership
from benchmarks.models import Benchmark, Item
from tests.reports import factories

from .conftest import PASSWORD, SHOTS, expect, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_downloads_the_dataset_and_uploads_it_back(page, tmp_path):
    bench, items, answers = factories.demo_three_raters()
    campaign = factories.human_campaign(bench, answers, name="DialogBench demo: human baseline")
    factories.frozen_gold(campaign)
    boss = factories.staff()  # made the campaign and its gold: its manager
    boss.set_password(PASSWORD)
    boss.save()
    assert Membership.objects.filter(campaign=campaign, user=boss, role="manager").exists()
    sign_in(page, "boss")
    page.goto("/reports/dialogbench-demo/")
    link = page.locator("#download-hf")
    expect(link).to_have_text("Hugging Face dataset (zip)")
    expect(link).not_to_have_attribute("aria-disabled", "true", timeout=60_000)
    shot(page, "report-download-hf-dataset", "Report", "#download-hf")
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == "dialogbench-demo-hf-dataset.zip"
    archive = tmp_path / download.suggested_filename
    download.save_as(archive)
    with zipfile.ZipFile(archive) as opened:
        assert {"README.md", "items/items-test.parquet", "labels/labels-test.parquet"} <= set(opened.namelist())

    page.goto("/manage/upload/")
    expect(page.locator("#formats tr[data-format='hf']")).to_be_visible()
    page.set_input_files("#id_file", str(archive))
    page.fill("#id_new_benchmark", "demo-from-hub")
    page.click("#upload-submit")
    page.wait_for_url("**/manage/?benchmark=demo-from-hub")
    expect(page.locator("body")).to_contain_text("as hf: demo-from-hub: 12 items created")
    assert Item.objects.filter(task__benchmark__slug="demo-from-hub").count() == 12
    assert Annotation.objects.filter(item__task__benchmark__slug="demo-from-hub").count() == 36
    page.screenshot(path=str(SHOTS / "manage-hf-dataset-imported.png"), full_page=True)

    # the same dataset with a label no task allows: refused on the page, nothing written
    broken = tmp_path / "broken"
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(broken)
    labels = broken / "labels" / "labels-test.parquet"
    table = pq.read_table(labels)
    rows = table.to_pylist()
    rows[2]["answers"] = '{"answer": "Z"}'
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), labels)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for path in sorted(p for p in broken.rglob("*") if p.is_file()):
            out.write(path, path.relative_to(broken).as_posix())
    (tmp_path / "broken.zip").write_bytes(buffer.getvalue())
    before = (Benchmark.objects.count(), Item.objects.count(), Annotation.objects.count())
    page.goto("/manage/upload/")
    page.set_input_files("#id_file", str(tmp_path / "broken.zip"))
    page.fill("#id_new_benchmark", "demo-broken")
    page.click("#upload-submit")
    error = page.locator("#import-error")
    expect(error).to_contain_text("Nothing was imported")
    expect(error).to_contain_text("broken.zip:labels/labels-test.parquet")
    expect(error).to_contain_text("row 2")
    expect(error).to_contain_text("answers.answer")
    shot(page, "manage-hf-dataset-refused", "Upload data", "#import-error")
    assert (Benchmark.objects.count(), Item.objects.count(), Annotation.objects.count()) == before
