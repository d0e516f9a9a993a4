"""Pages while something is not ready yet (issue 29, defects 6 and 7): the dashboard and the report page while the
report is computed (progress shown, figures filled in when ready, downloads only once there is a file), and the
annotation page after the last label while a disagreement is open (the same as when the labels agree: issue 41)."""
import uuid

import pytest
from django.contrib.auth.models import User

from annotation import actions
from annotation.models import Role
from benchmarks.actions import import_items
from reports.models import StoredReport
from reports.store import compute
from tests.conftest import DEMO_DATA
from tests.reports.test_stored import demo_benchmark

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def compute_all():
    for stored in StoredReport.objects.exclude(state="ready"):
        compute(stored.pk)


def test_the_dashboard_and_the_downloads_wait_for_a_report_being_computed(page, settings):
    settings.REPORTS_COMPUTE_IN_REQUEST = False  # a worker would compute it; none runs until the test says so
    _, campaign = demo_benchmark("db-demo")
    make_user("reader")
    User.objects.filter(username="reader").update(is_staff=True)
    sign_in(page, "reader")

    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    annotators = page.locator("#annotators")
    expect(annotators).to_contain_text("being computed")
    expect(page.locator("#notice")).not_to_contain_text("Could not load the figures")
    shot(page, "dashboard-report-computing", "Dashboard", "#annotators .report-pending")
    compute_all()
    expect(annotators).to_contain_text("db-demo-humans-rater-1", timeout=20_000)  # filled in, no reload
    expect(page.locator("#agreement")).not_to_contain_text("being computed")
    shot(page, "dashboard-report-ready", "Dashboard", "#annotators tr")

    # The report page: while a new report is computed the downloads are marked and give no file.
    StoredReport.objects.all().delete()
    page.goto(f"/reports/db-demo/?campaign={campaign.pk}")
    csv = page.locator("#download-csv")
    expect(csv).to_have_attribute("aria-disabled", "true")
    downloads = []
    page.on("download", lambda download: downloads.append(download))
    csv.click(force=True)  # marked disabled, but a person can still click it
    expect(page.locator("#downloads-note")).to_be_visible()
    expect(page.locator("#downloads-note")).to_contain_text("Offered once the report is ready")
    assert page.url.endswith(f"/reports/db-demo/?campaign={campaign.pk}") and not downloads
    shot(page, "report-downloads-waiting", "Report", "#downloads-note")
    # The link itself, opened meanwhile (no script, or a copied address): a page that says so, not a file.
    answer = page.goto(csv.get_attribute("href"))
    assert answer.status == 409 and not downloads
    expect(page.locator("#download-pending")).to_contain_text("Nothing was downloaded")
    shot(page, "report-download-pending", "Report not ready", "#download-pending")
    page.click("#back-to-report")
    compute_all()
    expect(csv).not_to_have_attribute("aria-disabled", "true", timeout=20_000)
    expect(page.locator("#downloads-note")).to_be_hidden()
    with page.expect_download() as info:
        csv.click()
    download = info.value
    assert download.suggested_filename == "report-db-demo.csv"
    text = download.path().read_text(encoding="utf-8")
    assert not text.lstrip().startswith("{") and "report_computing" not in text
    shot(page, "report-downloads-ready", "Report", "#download-csv")


def answer(campaign, user, value, count=None):
    done = 0
    while (count is None or done < count) and (lease := actions.lease_next_item(campaign, annotator=user)):
        actions.submit_annotation(lease.assignment, annotator=user, answers={"answer": value},
                                  client_submission_id=str(uuid.uuid4()))
        done += 1


def test_the_page_after_the_last_label_says_nothing_of_a_disagreement(page):
    """Issue 41, item 4: the labeller sees the batch complete and the hand-in offered, as when the labels agree;
    whether the batch can be handed in yet is for its readers."""
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-two")
    boss = User.objects.create_user("boss", is_staff=True)
    ann1, ann2 = make_user("ann1"), make_user("ann2")
    campaign = actions.create_campaign(actor=boss, name="Two raters", benchmark="db-two", protocol="production",
                                       settings={"overlap": 2, "batch_size": 100, "qc_sample_size": 2, "seed": 1,
                                                 "auto_hand_in": False, "disagreement_policy": "adjudicate",
                                                 "min_reading_seconds": 0})
    for user in (ann1, ann2):
        actions.add_member(campaign, actor=boss, user=user, role=Role.ANNOTATOR)
    actions.cut_batches(campaign, actor=boss)
    answer(campaign, ann2, "B")  # the first batch: B on every item from ann2 ...
    # ... A from ann1, whose last label is typed on the page.
    answer(campaign, ann1, "A", count=campaign.batches.get().items.count() - 1)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#item")).to_be_hidden()  # the last item's card goes with it (a grid once overrode `hidden`)
    button = page.locator("#hand-in")
    expect(button).to_be_visible()
    expect(button).to_be_enabled()  # as when the labels agree
    expect(page.locator("#done-text")).to_contain_text("Batch 1 is complete.")
    expect(page.locator("#done")).not_to_contain_text("final label")
    shot(page, "annotate-last-label-disagreeing", "Label", "#done")


def test_a_hand_in_while_a_decision_is_awaited_reads_as_one_made_at_once(page):
    """Issue 41, item 4: in a campaign that hands batches in by hand, the labeller who hands the batch in while an
    item waits for an expert's decision is shown what they are shown when the labels agreed and the batch went on;
    the batch goes in when the decision arrives."""
    from annotation.models import BatchState, Disagreement

    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-hand")
    boss = make_user("boss")
    User.objects.filter(pk=boss.pk).update(is_staff=True)
    boss.is_staff = True
    ann1, ann2, expert = make_user("ann1"), make_user("ann2"), make_user("expert")
    sign_in(page, "ann1")
    seen, campaigns = [], []
    for agree in (True, False):
        campaign = actions.create_campaign(
            actor=boss, name=f"Hand-in {agree}", benchmark="db-hand", protocol="production",
            settings={"overlap": 2, "batch_size": 100, "qc_sample_size": 2, "seed": 1, "auto_hand_in": False,
                      "disagreement_policy": "adjudicate", "min_reading_seconds": 0})
        for user, role in ((ann1, Role.ANNOTATOR), (ann2, Role.ANNOTATOR), (expert, Role.EXPERT)):
            actions.add_member(campaign, actor=boss, user=user, role=role)
        actions.cut_batches(campaign, actor=boss)
        answer(campaign, ann2, "A")
        # ann1's last label, typed on the page, agrees with ann2's or not (the others agree).
        answer(campaign, ann1, "A", count=campaign.batches.get().items.count() - 1)
        page.goto(f"/campaigns/{campaign.pk}/annotate/")
        page.wait_for_selector("#item:not([hidden]) .turn")
        page.keyboard.press("a" if agree else "b")
        page.keyboard.press("Enter")
        expect(page.locator("#done")).to_be_visible()
        button = page.locator("#hand-in")
        expect(button).to_be_visible()
        button.click()
        expect(page.locator("#notice.ok")).to_be_visible()
        expect(button).to_be_hidden()
        notice = page.text_content("#notice")
        shot(page, f"annotate-hand-in-{'agreed' if agree else 'awaiting-decision'}", "Label", "#notice")
        page.reload()  # and afterwards: the same page, no second offer
        expect(page.locator("#done")).to_be_visible()
        expect(button).to_be_hidden()
        seen.append((notice, page.text_content("#done-text")))
        campaigns.append(campaign)
    assert seen[0] == seen[1], seen
    assert seen[0][0] == "Batch 1 was handed in to QC."
    agreed, awaiting = (c.batches.get() for c in campaigns)
    assert agreed.state == BatchState.HANDED_IN and awaiting.state == BatchState.ANNOTATING
    # The manager sees the request and what it waits for.
    page.context.clear_cookies()
    sign_in(page, "boss")
    page.goto(f"/manage/campaigns/{awaiting.campaign_id}/")
    expect(page.locator("#batches .hand-in-request")).to_have_text("hand-in requested by ann1, waiting for 1 decision")
    shot(page, "manage-hand-in-requested", "", "#batches .hand-in-request")
    for disagreement in Disagreement.objects.filter(batch_item__batch=awaiting, status="open"):
        actions.resolve_disagreement(disagreement, actor=expert, value="A")
    awaiting.refresh_from_db()
    assert awaiting.state == BatchState.HANDED_IN
