"""The Hugging Face dataset on the pages: the report page's zip, read back by `datasets`, and the upload page taking the
zip or the Parquet files themselves, a broken one refused with its file, row and field and nothing written."""
import io
import re
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Annotation
from benchmarks.models import Benchmark, Item
from modeleval.models import Prediction
from reports import hf_dataset
from tests.reports.test_stored import demo_benchmark

pytestmark = pytest.mark.django_db


def downloaded(client, tmp_path):
    page = client.get("/reports/db/").content.decode()
    href = re.search(r'<a [^>]*href="([^"]+)"[^>]*id="download-hf"', page).group(1).replace("&amp;", "&")
    answer = client.get(href)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    return answer.content


def test_the_report_pages_zip_is_a_dataset_that_datasets_loads_and_the_upload_page_imports(client, tmp_path):
    from datasets import load_dataset

    demo_benchmark("db")
    staff = User.objects.create_user("boss2", is_staff=True)
    client.force_login(staff)
    content = downloaded(client, tmp_path)
    folder = tmp_path / "unzipped"
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert "README.md" in archive.namelist() and "labels/labels-test.parquet" in archive.namelist()
        archive.extractall(folder)
    assert load_dataset(str(folder), "labels")["test"].num_rows == Annotation.objects.count()
    assert "Krippendorff" in (folder / "README.md").read_text()
    response = client.post("/manage/upload/", {"file": SimpleUploadedFile("db.zip", content),
                                               "new_benchmark": "db-copy", "format": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Item.objects.filter(task__benchmark__slug="db-copy").count() == 12
    assert Annotation.objects.filter(item__task__benchmark__slug="db-copy").count() == 36
    assert Prediction.objects.filter(item__task__benchmark__slug="db-copy").count() == 12
    assert "Imported db.zip as hf" in client.get(response["Location"]).content.decode()
    # the Parquet files themselves, chosen together, as the same dataset: nothing new
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.rglob("*.parquet"))]
    again = client.post("/manage/upload/", {"file": files, "benchmark": "db-copy"})
    assert again.status_code == 302
    assert "0 items created, 12 unchanged; 0 labels created, 36 unchanged" in client.get(
        again["Location"]).content.decode()


def test_a_broken_upload_names_file_row_and_field_and_writes_nothing(client, tmp_path):
    demo_benchmark("db")
    client.force_login(User.objects.create_user("boss2", is_staff=True))
    folder = tmp_path / "ds"
    hf_dataset.export_dataset("db", folder, options=hf_dataset.ReportOptions(n_resamples=20))
    path = folder / "items" / "items-test.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[4]["meta"] = '{"language": "en", "x": [1, 2'
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    before = (Benchmark.objects.count(), Item.objects.count(), Annotation.objects.count())
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.rglob("*.parquet"))]
    response = client.post("/manage/upload/", {"file": files, "new_benchmark": "db-broken", "format": "hf"})
    body = response.content.decode()
    assert response.status_code == 400 and 'id="import-error"' in body and "Nothing was imported" in body
    assert "items-test.parquet:row 4: field &#x27;meta&#x27;" in body and "/tmp" not in body
    assert (Benchmark.objects.count(), Item.objects.count(), Annotation.objects.count()) == before
    two = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.rglob("*.parquet"))[:2]]
    several = client.post("/manage/upload/", {"file": two, "new_benchmark": "db-two", "format": "jsonl"})
    assert several.status_code == 400 and "one file at a time" in several.content.decode()
