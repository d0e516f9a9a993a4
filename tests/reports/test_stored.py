"""Stored reports: computed by a real `cpu` worker, served from storage, stale the moment a row they
read changes (database triggers), recomputed with the same figures as a report built on the spot."""
import json

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Annotation, GoldLabel, GoldVersion
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval.models import Prediction
from reports.build import public
from reports.models import ReportText, StoredReport
from reports.service import make_report
from tests.conftest import DEMO_DATA
from tests.modeleval.conftest import Worker, wait_for, worker_environment
from tests.reports import factories


def demo_benchmark(slug):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", slug)
    benchmark = Benchmark.objects.get(slug=slug)
    items = Item.objects.filter(task__benchmark=benchmark)
    campaign = factories.human_campaign(benchmark, {i.pk: [i.source_gold["answer"], "A", "B"] for i in items},
                                        name=f"{slug}-humans")
    factories.frozen_gold(campaign)
    factories.model_run(benchmark, list(benchmark.tasks.all()), f"{slug}-m1",
                        {i.pk: {"answer": "A", "answer_norm": "B", "answer_per_token": "A",
                                "options": factories.options_for({"A": -1.0, "B": -2.0})} for i in items})
    return benchmark, campaign


def fresh(benchmark):
    return StoredReport.objects.create(key=f"k-{benchmark.pk}", benchmark=benchmark, state="ready",
                                       report={}, computed_at=timezone.now())


@pytest.mark.django_db
def test_a_change_to_any_input_marks_the_benchmarks_stored_reports_stale_at_once():
    bench, campaign = demo_benchmark("db")
    other, _ = demo_benchmark("other")
    label = Annotation.objects.filter(campaign=campaign).first()
    writes = {
        "label": lambda: Annotation.objects.filter(pk=label.pk).update(value="D"),
        "item": lambda: Item.objects.filter(task__benchmark=bench).first().save(),
        "gold": lambda: GoldLabel.objects.create(version=GoldVersion.objects.create(
            benchmark=bench, campaign=campaign, number=2), item=label.item, value="A", method="source"),
        "prediction": lambda: Prediction.objects.filter(run__benchmark=bench).update(answer="B"),
    }
    for what, write in writes.items():
        StoredReport.objects.all().delete()
        mine, theirs = fresh(bench), fresh(other)
        write()
        mine.refresh_from_db()
        theirs.refresh_from_db()
        assert mine.stale_since is not None, what
        assert theirs.stale_since is None, what  # another benchmark's report stays fresh


@pytest.fixture
def cpu_worker(transactional_db, settings, tmp_path):
    settings.REPORTS_COMPUTE_IN_REQUEST = False
    worker = Worker(worker_environment(), tmp_path / "cpu.log", "reports", queue="cpu")
    yield worker
    worker.stop()


def comparable(report):
    out = json.loads(json.dumps(public(report)))
    out.pop("generated_at")
    return out


def test_reports_are_computed_on_the_cpu_queue_stored_and_recomputed_after_a_label_changes(cpu_worker):
    bench, campaign = demo_benchmark("db")
    staff = User.objects.create_user("report-reader", password="x", is_staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    query = {"benchmark": "db", "campaign": campaign.pk}

    first = api.get("/api/v1/reports/", query)
    assert first.status_code == 202 and first.json()["code"] == "report_computing"
    assert first["Retry-After"] == "2"

    def served():
        answer = api.get("/api/v1/reports/", query)
        return answer if answer.status_code == 200 else None

    report = wait_for(served, 120, "the stored report", [cpu_worker]).json()
    stored = StoredReport.objects.get()
    assert stored.state == "ready" and stored.requested_by == staff
    assert set(stored.inputs) == {"items", "labels", "gold", "predictions", "code"}
    assert comparable(report) == comparable(make_report("db", campaign.pk))
    # Other options are another stored report.
    assert api.get("/api/v1/reports/", {**query, "rule": "acc"}).status_code == 202
    assert StoredReport.objects.count() == 2

    # One label changes: at once the report is stale; the page's frame keeps showing the old one meanwhile.
    label = Annotation.objects.filter(campaign=campaign, value="A").first()
    Annotation.objects.filter(pk=label.pk).update(value=label.item.source_gold["answer"],
                                                  answers={"answer": label.item.source_gold["answer"]})
    assert StoredReport.objects.get(pk=stored.pk).stale_since is not None
    pending = api.get("/api/v1/reports/", query)
    assert pending.status_code == 202 and pending.json()["stale"] is True and pending.json()["has_report"] is True
    client = APIClient()
    client.force_login(staff)
    assert client.get(f"/reports/db/embed/?campaign={campaign.pk}").status_code == 200

    again = wait_for(served, 120, "the recomputed report", [cpu_worker]).json()
    assert again["multiple_choice"] != report["multiple_choice"]
    assert comparable(again) == comparable(make_report("db", campaign.pk))
    assert StoredReport.objects.get(pk=stored.pk).inputs["labels"] != stored.inputs["labels"]


@pytest.mark.django_db
def test_a_stored_report_is_served_as_text_kept_per_format_until_its_figures_change():
    bench, campaign = demo_benchmark("db")
    staff = User.objects.create_user("report-reader", password="x", is_staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    query = {"benchmark": "db", "campaign": campaign.pk}
    first = api.get("/api/v1/reports/", query)  # computed in the request here (REPORTS_COMPUTE_IN_REQUEST)
    assert first.status_code == 200
    stored = StoredReport.objects.get()
    kept = ReportText.objects.get(stored=stored, format="json")
    assert kept.generation == stored.generation == 1 and kept.text == first.content.decode()
    assert comparable(json.loads(kept.text)) == comparable(make_report("db", campaign.pk))
    # Served again: the kept text itself, not a new rendering (a kept text changed by hand shows through).
    ReportText.objects.filter(pk=kept.pk).update(text='{"kept": true}\n')
    assert api.get("/api/v1/reports/", query).json() == {"kept": True}
    assert api.get("/api/v1/reports/", {**query, "format": "csv"}).status_code == 200
    assert set(ReportText.objects.values_list("format", flat=True)) == {"json", "csv"}
    # A label changes: stale at once (202), recomputed with new figures, the old renderings dropped.
    Annotation.objects.filter(campaign=campaign, value="A").update(value="D")
    answer = api.get("/api/v1/reports/", query)
    assert answer.status_code == 200
    stored.refresh_from_db()
    assert stored.generation == 2 and stored.campaign_ids == [campaign.pk]
    assert list(ReportText.objects.values_list("format", "generation")) == [("json", 2)]
    assert comparable(answer.json()) == comparable(make_report("db", campaign.pk))
