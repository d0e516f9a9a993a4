"""The four flows in a real browser: annotator (keyboard only), QC over two rounds, expert, researcher."""
import re
import threading

import pytest
from django.db import connection

from annotation import actions
from annotation.models import Annotation, BatchState, Disagreement, Event
from tests.frontend.conftest import SCRIPT, diqad_item, make_campaign, submit_score, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROLES = {"boss": None, "ann1": "annotator", "ann2": "annotator", "qc": "qc", "expert": "expert", "viewer": "viewer"}


@pytest.fixture
def people(tmp_path):
    from benchmarks.actions import import_items

    # Every item is long and carries markup, whichever one the lease serves first.
    text = f"Hello {SCRIPT} <b>bold</b> " + "a long turn " * 20
    items = [diqad_item(n, turns=22, text=text, label=0 if n == 3 else 2) for n in range(1, 5)]
    import_items(write_items(tmp_path / "hostile.jsonl", items), "diqad", "hostile")
    users = {name: make_user(name, researcher=name == "viewer") for name in ROLES}
    users["boss"].is_staff = True
    users["boss"].save()
    return users


def campaign_for(people, roles=None, **settings):
    values = {"overlap": 1, "batch_size": 4, "qc_sample_size": 4, "min_reading_seconds": 0, "seed": 1, **settings}
    roles = roles or {name: role for name, role in ROLES.items() if role}
    campaign = make_campaign(people["boss"], people, "hostile", roles=roles, **values)
    actions.cut_batches(campaign, actor=people["boss"])
    return campaign


def label_all(campaign, user, score=2):
    while lease := actions.lease_next_item(campaign, annotator=user):
        submit_score(lease.assignment, user, score)


def test_annotator_labels_with_the_keyboard_only(page, people):
    campaign = campaign_for(people, min_reading_seconds=3)
    sign_in(page, "ann1")
    shot(page, "home-annotator", "My work", f"a[href='/campaigns/{campaign.pk}/annotate/']")
    page.keyboard.press("Tab")  # skip link, then the brand, the nav link ... until the campaign's link
    page.locator(f"a[href='/campaigns/{campaign.pk}/annotate/']").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#item:not([hidden]) .turn")
    page.evaluate("window.sameDocument = true")  # gone if any navigation reloads the page
    first = page.text_content("#item-id")
    # Markup in the dialogue is shown as text, never run.
    assert page.locator(".turn .text", has_text="<script>window.pwned = 1</script>").count() >= 1
    assert page.evaluate("window.pwned") is None and page.locator(".turn b").count() == 0
    page.keyboard.press("?")
    assert page.locator("#guidelines").is_visible()
    page.keyboard.press("Escape")
    # The score first (2 = "2: meets all dimensions"), then N: no verification needed; Enter submits too early.
    for key in ("2", "n", "Enter"):
        page.keyboard.press(key)
    page.wait_for_selector("#notice.error")
    assert "Too early" in page.text_content("#notice") and "s left" in page.text_content("#notice")
    shot(page, "annotate-too-early", "Label", "#countdown.waiting")
    page.wait_for_selector("#countdown:not(.waiting)", timeout=6000)
    page.keyboard.press("Enter")
    expect(page.locator("#item-id")).not_to_have_text(first)
    # Item 2: Yes, score 0, which asks for its reasons; the reasons question appears only then.
    page.wait_for_timeout(3100)
    page.keyboard.press("y")
    assert page.locator("[data-key='reasons_0']").is_hidden()
    page.keyboard.press("0")
    assert page.locator("[data-key='reasons_0']").is_visible()
    page.keyboard.press("2")  # toggles "not relevant"
    shot(page, "annotate-conditional", "Label", "[data-key='reasons_0'] input:checked")
    page.keyboard.press("Enter")
    page.wait_for_selector("#notice.ok")
    assert page.evaluate("window.sameDocument") is True
    assert page.locator("#progress-text").text_content().find("2 of 4") >= 0
    mine = list(Annotation.objects.filter(annotator=people["ann1"]).order_by("id").values_list("answers", flat=True))
    assert mine == [{"needs_verification": False, "score": 2},
                    {"needs_verification": True, "score": 0, "reasons_0": ["not_relevant"]}]
    shot(page, "annotate-next", "Label", ".turn")


def test_annotator_retry_after_lost_connection_keeps_one_label(page, people):
    campaign = campaign_for(people)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    sent = []
    # The first two submits "lose the connection" after reaching the server: the label is stored but
    # the answer never arrives, so the page must retry with the same id.
    def flaky(route):
        sent.append(route.request.post_data_json["client_submission_id"])
        response = route.fetch()
        route.abort() if len(sent) <= 2 else route.fulfill(response=response)
    page.route("**/submit/", flaky)
    for key in ("2", "n", "Enter"):
        page.keyboard.press(key)
    page.wait_for_selector("#notice.ok", timeout=15_000)
    assert len(sent) == 3 and len(set(sent)) == 1
    assert Annotation.objects.filter(annotator=people["ann1"]).count() == 1
    assert "earlier attempt" in page.text_content("#notice")


def test_qc_rejects_then_accepts_after_round_two(page, people):
    campaign = campaign_for(people)
    label_all(campaign, people["ann1"], score=2)
    batch = campaign.batches.get()
    actions.hand_in_batch(batch, actor=people["boss"])
    sign_in(page, "qc")
    page.click(f"a[href='/batches/{batch.pk}/review/']")
    page.click("#start")
    page.wait_for_selector("#decide:not([hidden])")

    def qc_labels(choice_for):
        for n, item in enumerate(page.locator(".sample-item").all()):
            item.locator("label.choice").nth(choice_for(n)).click()
            expect(item).to_have_class(re.compile(r"agrees|differs"))
        expect(page.locator("#figures p.muted")).to_have_text(re.compile(r"^4 of 4"))

    qc_labels(lambda n: 1 if n == 0 else 0)  # one item disagrees: 75% < 92%
    assert "75.0%" in page.text_content("#overall") and page.locator("#override-box").is_visible()
    page.click("#accept")
    page.click("#ask-confirm")
    page.wait_for_selector("#notice.error")
    assert "below the acceptance thresholds" in page.text_content("#notice")
    assert "below the acceptance thresholds" in page.text_content("#decide-notice")  # next to the buttons
    shot(page, "qc-below-threshold", "QC", "#verdict.fail")
    page.fill("#reason", "Item 1 is a 1, not a 2: reread the proactivity rule.")
    page.click("#reject")
    page.click("#ask-confirm")
    page.wait_for_selector("#notice.ok")
    assert "round 2" in page.text_content("#batch-state")
    # Round 2, labelled again outside the browser and handed in.
    label_all(campaign, people["ann1"], score=2)
    actions.hand_in_batch(batch, actor=people["boss"])
    page.reload()
    page.click("#start")
    page.wait_for_selector("#decide:not([hidden])")
    qc_labels(lambda n: 0)
    assert "100.0%" in page.text_content("#overall")
    page.fill("#reason", "All sampled labels hold.")
    page.click("#accept")
    page.click("#ask-confirm")
    page.wait_for_selector("#notice.ok")
    assert "accepted" in page.text_content("#batch-state")
    assert page.locator("#history tr").count() >= 8
    assert set(Event.objects.filter(batch=batch).values_list("round", flat=True)) >= {1, 2}
    batch.refresh_from_db()
    assert batch.state == BatchState.ACCEPTED and batch.round == 2
    shot(page, "qc-accepted", "QC", "#history tr")


def test_expert_settles_a_disagreement(page, people):
    campaign = campaign_for(people, overlap=2)
    label_all(campaign, people["ann1"], score=2)
    label_all(campaign, people["ann2"], score=1)
    disagreement = Disagreement.objects.filter(campaign=campaign).order_by("id").first()
    sign_in(page, "expert")
    page.click(f"a[href='/campaigns/{campaign.pk}/disagreements/']")
    card = page.locator(f".disagreement[data-id='{disagreement.pk}']")
    card.wait_for()
    assert "ann1" in card.text_content() and "ann2" in card.text_content()
    card.locator("label.choice").nth(1).click()  # "1: answers but lacks ..."
    card.locator("textarea").fill("The reply answers but offers nothing more.")
    shot(page, "expert-queue", "Disagreements", ".disagreement")
    card.locator("button[type=submit]").click()
    page.wait_for_selector("#notice.ok")
    disagreement.refresh_from_db()
    assert disagreement.status == "resolved" and disagreement.resolved_value == 1
    expect(page.locator("#settled tr").first).to_be_visible()


def test_researcher_runs_a_model_and_downloads_the_report(page, people, monkeypatch):
    from tests.modeleval.conftest import require_model

    require_model()
    import torch

    from modeleval import actions as model_actions
    from modeleval import runner
    from modeleval.models import EvalRun

    torch.set_num_threads(1)
    model_actions.register_packaged_model()
    workers = []

    def score_in_background(run_id):
        # Stands in for the gpu queue: the page sees the run queued, then running, then finished.
        def work():
            try:
                runner.run_sync(EvalRun.objects.get(pk=run_id))
            finally:
                connection.close()
        workers.append(threading.Thread(target=work))
        workers[-1].start()

    monkeypatch.setattr(model_actions, "enqueue_chunks", score_in_background)
    campaign = campaign_for(people)
    label_all(campaign, people["ann1"])
    from benchmarks.actions import import_items
    from tests.conftest import DEMO_DATA

    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    sign_in(page, "viewer")
    page.click("a[href='/runs/']")
    page.select_option("#benchmark", "db-demo")
    page.fill("#limit", "1")
    page.click("#start")
    page.wait_for_selector("#notice.ok, #notice.error", timeout=60_000)  # scoring shares the CPU
    assert "started" in page.text_content("#notice"), page.text_content("#notice")
    shot(page, "runs-started", "Model runs", "#runs tr")
    page.wait_for_selector("#runs tr[data-state='finished']", timeout=120_000)
    for worker in workers:
        worker.join(timeout=60)
    shot(page, "runs-finished", "Model runs", "#runs tr[data-state='finished'] progress")
    page.click("#runs tr[data-state='finished'] a")
    page.wait_for_url("**/reports/db-demo/")
    frame = page.frame_locator("#report-frame")
    frame.locator("table").first.wait_for()
    shot(page, "report", "Report", "#report-frame")
    with page.expect_download() as info:
        page.click("#download-csv")
    csv = info.value.path().read_text(encoding="utf-8")
    assert info.value.suggested_filename == "report-db-demo.csv" and len(csv.splitlines()) > 3
    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    page.wait_for_selector("#agreement tr, #annotators tr")
    page.wait_for_selector("#annotators tr td")
    shot(page, "dashboard", "Dashboard", "#batches tr")


def test_annotator_gets_the_refusal_page(page, people):
    campaign = campaign_for(people)
    batch = campaign.batches.get()
    sign_in(page, "ann1")
    for url in (f"/batches/{batch.pk}/review/", "/reports/hostile/", "/runs/"):
        response = page.goto(url)
        assert response.status == 403 and page.locator("#refusal").is_visible()
    shot(page, "refused", "Not allowed", "#refusal")
