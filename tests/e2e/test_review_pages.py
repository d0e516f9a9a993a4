"""The QC page: blind review, keyboard labelling, no verdict before any label, confirmation before a
decision, notices next to the buttons, the override accept keeping both reasons in the history."""
import pytest

from annotation import actions
from annotation.models import BatchState, Event, QCSampleItem
from tests.frontend.conftest import diqad_item, make_campaign, submit_score, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def handed_in_batch(tmp_path, **settings):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in range(1, 4)]), "diqad", "dq")
    people = {name: make_user(name) for name in ("boss", "ann1", "qc")}
    values = {"overlap": 1, "batch_size": 3, "qc_sample_size": 3, "min_reading_seconds": 0, "seed": 1, **settings}
    campaign = make_campaign(people["boss"], people, "dq", roles={"ann1": "annotator", "qc": "qc"}, **values)
    [batch] = actions.cut_batches(campaign, actor=people["boss"])
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    actions.hand_in_batch(batch, actor=people["ann1"])
    return batch


def start(page, batch):
    sign_in(page, "qc")
    page.goto(f"/batches/{batch.pk}/review/")
    page.click("#start")
    page.wait_for_selector("#decide:not([hidden])")


def test_blind_review_by_keyboard_with_confirmed_override(page, tmp_path):
    batch = handed_in_batch(tmp_path, qc_blind=True)
    start(page, batch)
    finals = page.locator(".sample-item .final")
    expect(finals).to_have_count(3)
    assert finals.all_text_contents() == ["hidden until you give your label"] * 3
    # Nothing labelled: no verdict and no override yet.
    expect(page.locator("#verdict")).to_have_text("No verdict yet: label the sampled items first.")
    assert "does not pass" not in page.text_content("#figures") and page.locator("#override-box").is_hidden()
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"qc-blind-{width}", "QC", ".sample-item kbd")
    for n, key in enumerate(("2", "1", "2"), start=1):
        page.keyboard.press(key)
        expect(page.locator(".sample-item input:checked")).to_have_count(n)
    expect(page.locator(".sample-item.pending")).to_have_count(0)  # every label saved
    expect(finals.nth(0)).to_have_text("2: meets all dimensions")  # shown once the QC has answered
    values = list(QCSampleItem.objects.order_by("position").values_list("qc_value", flat=True))
    assert values == [2, 1, 2]
    expect(page.locator("#verdict")).to_have_text("The sample does not pass the rule.")
    # A decision asks first; cancelling sends nothing.
    page.click("#reject")
    expect(page.locator("#ask")).to_be_visible()
    page.click("#ask-cancel")
    batch.refresh_from_db()
    assert batch.state == BatchState.IN_REVIEW
    page.click("#accept")
    page.click("#ask-confirm")
    expect(page.locator("#decide-notice")).to_contain_text("below the acceptance thresholds")
    page.fill("#reason", "Two of three hold; the third is borderline.")
    page.fill("#override", "Client deadline; relabel in the next batch.")
    page.click("#accept")
    expect(page.locator("#ask")).to_contain_text("flagged as an override")
    shot(page, "qc-confirm", "QC", "#ask")
    page.click("#ask-confirm")
    expect(page.locator("#decide-notice")).to_have_text("Batch accepted.")
    reason = Event.objects.get(batch=batch, kind="accepted").reason
    assert "Two of three hold" in reason and "Client deadline" in reason
    expect(page.locator("#history")).to_contain_text("Two of three hold")
    expect(page.locator("#history")).to_contain_text("Client deadline")
    shot(page, "qc-override-accepted", "QC", "#history tr")


def test_check_review_shows_the_final_label_first(page, tmp_path):
    batch = handed_in_batch(tmp_path, qc_blind=False)
    start(page, batch)
    assert page.locator(".sample-item .final").all_text_contents() == ["2: meets all dimensions"] * 3
    assert page.locator("#blind-note").is_hidden()
