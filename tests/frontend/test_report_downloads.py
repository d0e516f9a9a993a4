"""A report still computing never reaches a reader as a file (issue 29, defect 7): the report page's download
links answer a page saying the report is being computed (409), and the file itself once the report is ready."""
import re

import pytest
from django.contrib.auth.models import User

from reports.models import StoredReport
from reports.store import compute
from tests.reports.test_stored import demo_benchmark

pytestmark = pytest.mark.django_db


def download_links(client, campaign):
    page = client.get(f"/reports/db/?campaign={campaign.pk}")
    assert page.status_code == 200
    links = dict(re.findall(r'<a [^>]*href="([^"]+)"[^>]*id="download-(\w+)"', page.content.decode()))
    links = {fmt: href.replace("&amp;", "&") for href, fmt in links.items()}
    assert set(links) == {"html", "csv", "json", "latex", "hf"}, links
    return page.content.decode(), links


def test_a_download_made_while_the_report_is_computed_says_so_and_is_no_file(client, settings):
    settings.REPORTS_COMPUTE_IN_REQUEST = False  # a worker computes it: nothing runs in this test
    _, campaign = demo_benchmark("db")
    client.force_login(User.objects.create_user("reader", is_staff=True))
    page, links = download_links(client, campaign)
    assert 'aria-disabled="true"' in page and "Offered once the report is ready" in page
    for fmt, href in links.items():
        answer = client.get(href)
        body = answer.content.decode()
        assert answer.status_code == 409, (fmt, answer.status_code, body[:200])
        assert answer["Content-Type"].startswith("text/html")
        assert "attachment" not in answer.get("Content-Disposition", "")
        assert "being computed" in body and "Nothing was downloaded" in body
        assert "report_computing" not in body and '"state"' not in body
    # Once the report is computed the same links give the files, named for the benchmark.
    compute(StoredReport.objects.get().pk)
    page, links = download_links(client, campaign)
    assert 'aria-disabled="true"' not in page
    for fmt, extension in (("html", "html"), ("csv", "csv"), ("json", "json"), ("latex", "tex")):
        answer = client.get(links[fmt])
        assert answer.status_code == 200
        assert answer["Content-Disposition"] == f'attachment; filename="report-db.{extension}"'
        assert b"report_computing" not in answer.content
    assert client.get(links["csv"]).content.decode().splitlines()[0].count(",") >= 2
    dataset = client.get(links["hf"])
    assert dataset.status_code == 200 and dataset["Content-Type"] == "application/zip"
    assert dataset["Content-Disposition"] == 'attachment; filename="db-hf-dataset.zip"'


def test_a_download_of_an_unknown_format_or_an_unreadable_report_is_refused(client):
    _, campaign = demo_benchmark("db")
    client.force_login(User.objects.create_user("nobody"))
    assert client.get(f"/reports/db/download/csv/?campaign={campaign.pk}").status_code in (403, 404)
    client.force_login(User.objects.create_user("reader", is_staff=True))
    assert client.get(f"/reports/db/download/exe/?campaign={campaign.pk}").status_code == 404


def test_the_downloads_go_by_their_formats_names(client, settings):
    """HTML among the downloads, and each by the name its format goes by: LaTeX, not "LATEX"."""
    _, campaign = demo_benchmark("db")
    client.force_login(User.objects.create_user("reader", is_staff=True))
    page, _ = download_links(client, campaign)
    names = dict(re.findall(r'id="download-(\w+)"[^>]*>([^<]+)</a>', page))
    assert names == {"html": "HTML", "csv": "CSV", "json": "JSON", "latex": "LaTeX",
                     "hf": "Hugging Face dataset (zip)"}, names
