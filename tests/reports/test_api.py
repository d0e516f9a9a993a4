"""GET /api/v1/reports/ and `manage.py report`: who may read, each format, errors by status."""
import csv
import io
import json

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.models import GoldVersion
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from tests.conftest import DEMO_DATA
from tests.reports import factories


@pytest.fixture
def bench(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db")
    benchmark = Benchmark.objects.get(slug="db")
    items = Item.objects.filter(task__benchmark=benchmark)
    campaign = factories.human_campaign(benchmark, {i.pk: [i.source_gold["answer"], "A", "B"] for i in items})
    factories.frozen_gold(campaign)
    factories.model_run(benchmark, list(benchmark.tasks.all()), "m1",
                        {i.pk: {"answer": "A", "answer_norm": "B", "answer_per_token": "A",
                                "options": factories.options_for({"A": -1.0, "B": -2.0})} for i in items})
    return campaign


def client(kind):
    if kind == "anonymous":
        return APIClient()
    user = User.objects.create_user(kind, password="x", is_staff=kind == "staff")
    if kind == "researcher":
        user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    api = APIClient()
    api.force_authenticate(user)
    return api


@pytest.mark.parametrize("kind, status", [("staff", 200), ("researcher", 200), ("annotator", 403), ("anonymous", 403)])
def test_who_may_read_reports(bench, kind, status):
    response = client(kind).get("/api/v1/reports/", {"benchmark": "db"})
    assert response.status_code in ((401, 403) if kind == "anonymous" else (status,))


@pytest.mark.parametrize("fmt, media_type", [("json", "application/json"), ("csv", "text/csv"), ("html", "text/html"),
                                             ("latex", "application/x-latex")])
def test_each_format(bench, fmt, media_type):
    # A campaign's report: staff and the campaign's readers (researchers read benchmark-wide reports).
    response = client("staff").get("/api/v1/reports/", {"benchmark": "db", "campaign": bench.pk, "format": fmt})
    assert response.status_code == 200
    assert response["Content-Type"].startswith(media_type)
    body = response.content.decode()
    if fmt == "json":
        assert json.loads(body)["scope"]["campaign_id"] == bench.pk
    elif fmt == "csv":
        assert next(csv.reader(io.StringIO(body)))[0] == "section"
    elif fmt == "html":
        assert "<svg" in body
    else:
        assert r"\begin{tabular}" in body


def test_errors(bench):
    api = client("staff")
    assert api.get("/api/v1/reports/").status_code == 400
    assert api.get("/api/v1/reports/", {"benchmark": "nope"}).status_code == 404
    assert api.get("/api/v1/reports/", {"benchmark": "db", "campaign": 99999}).status_code == 404
    assert api.get("/api/v1/reports/", {"benchmark": "db", "gold_version": 7}).status_code == 404
    GoldVersion.objects.create(benchmark=bench.benchmark, campaign=bench, number=2)
    draft = api.get("/api/v1/reports/", {"benchmark": "db", "gold_version": 2, "format": "csv"})
    assert draft.status_code == 400 and "draft" in draft.json()["detail"]
    assert api.get("/api/v1/reports/", {"benchmark": "db", "format": "pdf"}).status_code == 404


def test_command_writes_each_format(bench, tmp_path):
    for fmt in ("json", "csv", "html", "latex"):
        out = tmp_path / f"report.{fmt}"
        call_command("report", "--benchmark", "db", "--campaign", str(bench.pk), "--format", fmt, "--out", str(out),
                     "--resamples", "50")
        assert out.stat().st_size > 500
    assert json.loads((tmp_path / "report.json").read_text())["options"]["n_resamples"] == 50
    with pytest.raises(CommandError, match="no benchmark"):
        call_command("report", "--benchmark", "nope", "--out", str(tmp_path / "x.json"))
