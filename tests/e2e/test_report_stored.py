"""The report page while its report is computed by a `cpu` worker: the progress card, the report once
stored, and the stale mark the moment a label changes, with the previous report kept in view until the
new one replaces it."""
import pytest

from annotation.models import Annotation
from tests.modeleval.conftest import Worker, worker_environment
from tests.reports.test_stored import demo_benchmark

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_report_page_follows_the_computation_and_shows_a_stale_report_as_stale(page, settings, tmp_path):
    settings.REPORTS_COMPUTE_IN_REQUEST = False
    env = worker_environment()  # empties this session's queue: before anything is queued
    bench, campaign = demo_benchmark("dialogbench-demo")
    make_user("report-reader").__class__.objects.filter(username="report-reader").update(is_staff=True)
    sign_in(page, "report-reader")
    page.goto(f"/reports/dialogbench-demo/?campaign={campaign.pk}")
    status = page.locator("#report-status")
    expect(status).to_be_visible()  # no worker yet: queued
    expect(status).to_contain_text("being computed (waiting for a worker)")
    expect(page.locator("#report-frame")).to_be_hidden()
    shot(page, "report-queued", "Report", "#report-status")

    worker = Worker(env, tmp_path / "cpu.log", "reports", queue="cpu")
    try:
        expect(status).to_be_hidden(timeout=60_000)
        frame = page.frame_locator("#report-frame")
        expect(frame.locator("#how-to-read")).to_be_visible(timeout=60_000)  # the HTML and its plots
    finally:
        worker.stop()

    # A label changes while no worker runs: the page marks its report stale and keeps it in view.
    label = Annotation.objects.filter(campaign=campaign, value="A").first()
    Annotation.objects.filter(pk=label.pk).update(value="B", answers={"answer": "B"})
    expect(status).to_be_visible(timeout=20_000)
    expect(status).to_contain_text("Stale: the data changed at")
    expect(status).to_have_attribute("data-stale", "1")
    expect(page.frame_locator("#report-frame").locator("#how-to-read")).to_be_visible(timeout=60_000)
    shot(page, "report-stale", "Report", "#report-status")

    worker = Worker(env, tmp_path / "cpu-2.log", "reports-2", queue="cpu")
    try:
        expect(status).to_be_hidden(timeout=60_000)
        expect(page.frame_locator("#report-frame").locator("#how-to-read")).to_be_visible(timeout=60_000)
    finally:
        worker.stop()
