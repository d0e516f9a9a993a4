"""Keyboard shortcuts of the workspace: the key of a score is the score, a lettered option is chosen by its
letter only, exclusion codes have letters, and `G` opens the guidelines like `g`."""
import re

import pytest

from annotation import actions
from annotation.models import Annotation
from tests.frontend.conftest import diqad_item, make_campaign, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def boss():
    return make_user("boss")


def campaign_on(boss, benchmark, **settings):
    ann = make_user("ann1")
    values = {"overlap": 1, "batch_size": 10, "qc_sample_size": 1, "min_reading_seconds": 0, "seed": 1, **settings}
    campaign = make_campaign(boss, {"ann1": ann}, benchmark, roles={"ann1": "annotator"}, **values)
    actions.cut_batches(campaign, actor=boss)
    return campaign


def open_workspace(page, campaign):
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")


def test_pressing_a_score_stores_that_score(page, boss, tmp_path):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in range(1, 4)]), "diqad", "dq")
    campaign = campaign_on(boss, "dq")
    open_workspace(page, campaign)
    chips = page.locator("[data-key='score'] label.choice kbd").all_text_contents()
    labels = page.locator("[data-key='score'] label.choice").all_text_contents()
    # The chip is the score; exclusion codes get letters, never digits.
    assert chips[:3] == ["2", "1", "0"] and all(label.startswith(f"{chip} {chip}:")
                                                for chip, label in zip(chips, labels[:3], strict=False))
    assert all(chip.isalpha() for chip in chips[3:]) and len(set(chips)) == len(chips)
    shot(page, "annotate-score-keys", "Label", "[data-key='score'] kbd")
    # The score by its own digit, then the first reason when asked, then N: no verification needed.
    for score, keys in ((0, "01n"), (1, "11n"), (2, "2n")):
        before = page.text_content("#item-id")
        for key in keys:
            page.keyboard.press(key)
        page.keyboard.press("Enter")
        if score < 2:
            expect(page.locator("#item-id")).not_to_have_text(before)
        else:
            page.wait_for_selector("#done:not([hidden])")
    scores = list(Annotation.objects.filter(annotator__username="ann1").order_by("id")
                  .values_list("answers__score", flat=True))
    assert scores == [0, 1, 2]


def test_exclusion_code_by_its_letter(page, boss, tmp_path):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(1)]), "diqad", "dq")
    open_workspace(page, campaign_on(boss, "dq"))
    letter = page.locator("[data-key='score'] label.choice", has_text="-1: private data").locator("kbd").text_content()
    for key in ("n", letter.lower(), "Enter"):
        page.keyboard.press(key)
    page.wait_for_selector("#done:not([hidden])")
    assert Annotation.objects.get().answers == {"needs_verification": False, "score": -1}


def test_lettered_options_by_their_letter_only_and_shift_g_opens_guidelines(page, boss, tmp_path):
    from benchmarks.actions import import_items

    item = {"id": "db-1", "task": "emotion_detection", "dialogue": ["speaker1: I passed!", "speaker2: Well done."],
            "options": {"A": "Anger", "B": "Joy", "C": "Fear", "D": "Sadness"}, "label": "B"}
    import_items(write_items(tmp_path / "db.jsonl", [item]), "dialogbench", "db")
    campaign = campaign_on(boss, "db")
    open_workspace(page, campaign)
    page.keyboard.press("Shift+G")
    expect(page.locator("#guidelines")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#guidelines")).to_be_hidden()
    page.keyboard.press("g")
    expect(page.locator("#guidelines")).to_be_visible()
    page.keyboard.press("Escape")
    assert page.locator("[data-key='answer'] kbd").all_text_contents() == ["A", "B", "C", "D"]
    page.keyboard.press("b")
    assert page.locator("[data-key='answer'] input:checked").get_attribute("id").endswith("-1")
    page.keyboard.press("3")  # no option shows key 3: nothing changes
    assert page.locator("[data-key='answer'] input:checked").get_attribute("id").endswith("-1")
    page.keyboard.press("Enter")
    # A batch's last label adds that the batch is complete.
    expect(page.locator("#notice")).to_have_text(re.compile(r"^Saved\.( Batch \d+ is complete\.)?$"))
    assert Annotation.objects.get().answers == {"answer": "B"}
