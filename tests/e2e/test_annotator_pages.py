"""The annotator's page beyond labelling: items left, the automatic (or manual) hand-in, skip with a
reason, flags, changing the last answer, the QC's reason in round 2, a second tab, guidelines."""
import pytest

from annotation import actions
from annotation.models import Annotation, BatchState, Event, ItemFlag
from tests.frontend.conftest import diqad_item, make_campaign, submit_score, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
GUIDELINES = "# Scoring rules\n\n**Score 2** meets every dimension. <script>window.pwned = 1</script>\n\n- one\n- two"


@pytest.fixture
def setup(tmp_path):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in range(1, 4)]), "diqad", "dq")
    people = {name: make_user(name) for name in ("boss", "ann1", "ann2", "qc", "trainer")}

    def campaign(**settings):
        values = {"overlap": 1, "batch_size": 3, "qc_sample_size": 1, "min_reading_seconds": 0, "seed": 1,
                  "guidelines": GUIDELINES, **settings}
        made = make_campaign(people["boss"], people, "dq", roles={"ann1": "annotator", "ann2": "annotator",
                                                                  "qc": "qc", "trainer": "trainer"}, **values)
        actions.cut_batches(made, actor=people["boss"])
        return made
    return people, campaign


def open_workspace(page, campaign, user="ann1"):
    sign_in(page, user)
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")


def label(page, keys="2n"):
    before = page.text_content("#item-id")
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_selector("#notice.ok")
    return before


def test_items_left_and_the_automatic_hand_in(page, setup):
    people, make = setup
    campaign = make(auto_hand_in=True)
    open_workspace(page, campaign)
    expect(page.locator("#left-for-you")).to_have_text("3 left for you")
    label(page)
    expect(page.locator("#left-for-you")).to_have_text("2 left for you")
    expect(page.locator("#progress-text")).to_contain_text("1 of 3 items done")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"annotate-tools-{width}", "Label", "#left-for-you")
    label(page)
    label(page)
    expect(page.locator("#done")).to_be_visible()
    # "Complete", not "handed in": whether the batch went on at its last label would say whether its labels agreed.
    expect(page.locator("#notice")).to_contain_text("Batch 1 is complete.")
    expect(page.locator("#done-text")).to_contain_text("Batch 1 is complete.")
    expect(page.locator("#done-text")).not_to_contain_text("handed in")
    assert page.locator("#hand-in").is_hidden()
    assert campaign.batches.get().state == BatchState.HANDED_IN
    shot(page, "annotate-handed-in", "Label", "#done")


def test_manual_hand_in_when_the_setting_is_off(page, setup):
    people, make = setup
    campaign = make(auto_hand_in=False)
    open_workspace(page, campaign)
    for _ in range(3):
        label(page)
    expect(page.locator("#hand-in")).to_be_visible()
    page.click("#hand-in")
    expect(page.locator("#notice")).to_have_text("Batch 1 was handed in to QC.")
    assert campaign.batches.get().state == BatchState.HANDED_IN


def test_skip_flag_and_change_the_last_answer(page, setup):
    people, make = setup
    campaign = make(auto_hand_in=True)
    open_workspace(page, campaign)
    skipped = page.text_content("#item-id").split()[-1]
    page.click("#skip")
    page.click("#ask-confirm")  # a reason is required
    expect(page.locator("#ask .field-error")).to_be_visible()
    page.fill("#ask-text", "The answer is cut off mid-sentence.")
    shot(page, "annotate-skip", "Label", "#ask")
    page.click("#ask-confirm")
    expect(page.locator("#notice")).to_have_text(f"Skipped item {skipped}.")
    assert Event.objects.get(kind="item_skipped").reason == "The answer is cut off mid-sentence."
    page.click("#flag")
    page.fill("#ask-text", "Speaker names are swapped.")
    page.click("#ask-confirm")
    expect(page.locator("#notice")).to_contain_text("Flag sent")
    assert ItemFlag.objects.get().comment == "Speaker names are swapped."
    first = label(page)  # No, score 2
    page.click("#change-last")
    expect(page.locator("#editing")).to_be_visible()
    expect(page.locator("#item-id")).to_have_text(first)
    assert page.locator("[data-key='score'] input:checked + kbd").text_content() == "2"
    page.locator("[data-key='score'] input:checked").focus()
    for key in ("0", "1"):  # score 0, then its first reason
        page.keyboard.press(key)
    shot(page, "annotate-change-last", "Label", "#editing")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_have_text(f"Your answer on item {first.split()[-1]} was changed.")
    changed = Annotation.objects.get(annotator__username="ann1")
    assert changed.value == 0 and changed.answers["reasons_0"] == ["no_or_wrong_answer"]
    assert page.locator("#editing").is_hidden() and page.text_content("#item-id") != first


def test_round_two_shows_the_qc_reason(page, setup):
    people, make = setup
    campaign = make(auto_hand_in=False, qc_sample_size=3)
    batch = campaign.batches.get()
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    actions.hand_in_batch(batch, actor=people["ann1"])
    actions.start_review(batch, actor=people["qc"])
    for entry in batch.reviews.get().sample.all():
        actions.record_qc_label(batch, actor=people["qc"], batch_item_id=entry.batch_item_id, value=1)
    actions.reject_batch(batch, actor=people["qc"], reason="These answers lack proactivity: score 1, not 2.")
    open_workspace(page, campaign)
    expect(page.locator("#qc-feedback")).to_be_visible()
    expect(page.locator("#qc-feedback-reason")).to_have_text("These answers lack proactivity: score 1, not 2.")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"annotate-round-2-{width}", "Label", "#qc-feedback")


def test_a_second_tab_is_told_the_item_was_already_submitted(page, setup):
    people, make = setup
    campaign = make()
    open_workspace(page, campaign)
    other = page.context.new_page()
    other.goto(f"/campaigns/{campaign.pk}/annotate/")
    other.wait_for_selector("#item:not([hidden]) .turn")
    same = page.text_content("#item-id")
    assert other.text_content("#item-id") == same
    label(page)
    for key in ("2", "n", "Enter"):
        other.keyboard.press(key)
    expect(other.locator("#notice.warn")).to_contain_text("already submitted, in another tab or window")
    assert other.text_content("#item-id") != same
    assert Annotation.objects.count() == 1
    other.close()


def test_guidelines_are_rendered_from_markdown_and_markup_is_not_run(page, setup):
    people, make = setup
    open_workspace(page, make())
    page.keyboard.press("g")
    box = page.locator("#guidelines-text")
    expect(box.locator("h1")).to_have_text("Scoring rules")
    expect(box.locator("strong")).to_have_text("Score 2")
    assert box.locator("li").count() == 2 and box.locator("script").count() == 0
    assert "<script>window.pwned = 1</script>" in box.inner_text() and page.evaluate("window.pwned") is None
    shot(page, "annotate-guidelines", "Label", "#guidelines h1")


def test_the_progress_is_asked_once_per_item_and_again_in_a_new_batch(page, setup):
    # Three items in batches of two: the third item comes from batch 2, whose progress the page must read.
    people, make = setup
    campaign = make(auto_hand_in=True, batch_size=2)
    calls = []
    page.on("request", lambda request: calls.append(request.url.split("/api/v1/", 1)[-1])
            if "/api/v1/" in request.url else None)
    open_workspace(page, campaign)
    expect(page.locator("#progress-text")).to_contain_text("Batch 1, round 1: 0 of 2 items done")
    del calls[:]
    label(page)
    expect(page.locator("#progress-text")).to_contain_text("Batch 1, round 1: 1 of 2 items done · 1 labelled by you")
    expect(page.locator("#left-for-you")).to_have_text("2 left for you")
    # The submission answers with the progress; the next item comes without it, and nothing else is asked.
    assert [c.split("/")[0] for c in calls] == ["assignments", "campaigns"], calls
    assert calls[0].endswith("/submit/") and calls[1].endswith("/next/?progress=0"), calls
    del calls[:]
    label(page)
    expect(page.locator("#notice")).to_contain_text("Batch 1 is complete.")
    expect(page.locator("#progress-text")).to_contain_text("Batch 2, round 1: 0 of 1 items done · 0 labelled by you")
    expect(page.locator("#left-for-you")).to_have_text("1 left for you")
    # The item from batch 2: its lease is read again, with batch 2's progress.
    assert len(calls) == 3 and calls[2].startswith("assignments/") and "submit" not in calls[2], calls
    label(page)
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#done-text")).to_contain_text("Batch 2 is complete.")
    assert list(campaign.batches.order_by("number").values_list("state", flat=True)) == [BatchState.HANDED_IN] * 2
