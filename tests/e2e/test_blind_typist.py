"""A blind typist: keys 50 ms apart, every request reaching the server 1 s late, on the workspace (annotation and the
gold panel's votes), the QC page and the expert's queue. Every stored label is a sequence typed whole on its item
while the page took keys; a sequence the page refused (typed while an answer was on its way, or straddling the
moment the next item showed) and the keys typed in the skip and flag dialogs store nothing, and the page says so.

Each test's plan counts its sequences (a sequence: the keys of one answer, ending with Enter where the page needs
it); together they type 55."""
import gettext
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Assignment, Disagreement, Event, EventKind, ItemFlag, LeaseStatus, QCSampleItem
from frontend.models import Preferences

from .conftest import SHOTS, expect, shot, sign_in
from .test_fast_typing import (
    diqad_answers,
    diqad_campaign,
    diqad_keys,
    disagreeing_campaign,
    gold_panel_campaign,
    handed_in_batch,
    open_workspace,
    stored,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GAP_MS = 50
DELAY_MS = 1000
PAUSED = "[data-keys='paused']"
FLAG_SENT = "Flag sent to the trainers. You can still label the item."


def slow_everything(page, ms=DELAY_MS):
    """Every request of the page reaches the server `ms` late, each on its own (they overlap)."""
    def delayed(route):
        page.wait_for_timeout(ms)
        route.continue_()
    page.route("**/*", delayed)


def press(page, keys):
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(GAP_MS)


def refusal(page):
    """What the page says about the keys it did not use, read at once ("" when it says nothing)."""
    return " ".join(page.locator("#keys-paused:not([hidden])").all_text_contents())


def until(page, done, what):
    """Waits for `done()`, looking every GAP_MS: a typist's next key comes that soon after (a locator assertion looks
    ever less often)."""
    for _ in range(15_000 // GAP_MS):
        if done():
            return
        page.wait_for_timeout(GAP_MS)
    raise AssertionError(f"waited 15 s for {what}")


def as_soon_as(page, selector, count):
    until(page, lambda: page.locator(selector).count() >= count, f"{count} of {selector}")


def keys_back(page):
    """The typist's pause: until the page takes keys again (nothing refused is holding them)."""
    until(page, lambda: not page.locator(PAUSED).count(), "the keys to work again")


# The workspace.

def settle(page):
    """Nothing on its way and the keys work: the typist's next sequence is for the item on screen."""
    until(page, lambda: page.locator("#submit").is_enabled(), "the page to wait for nothing")
    keys_back(page)


def on_screen(page):
    return page.text_content("#item-id").split()[-1]  # "Item x-001", "항목 x-001"


def straddle(page, keys):
    """The first key while the answer before is being saved, the rest as soon as the next item shows (returned)."""
    before = on_screen(page)
    press(page, keys[:1])
    until(page, lambda: on_screen(page) != before, "the next item")
    press(page, keys[1:])
    return on_screen(page)


def dialog(page, button, text, send):
    """Opens the skip or flag dialog, writes `text` and sends it with `send`: Ctrl+Enter in the text, or Tab to
    its button and Enter."""
    page.click(button)
    expect(page.locator("#ask")).to_be_visible()
    page.locator("#ask-text").press_sequentially(text, delay=GAP_MS)
    press(page, ["Control+Enter"] if send == "ctrl" else ["Tab", "Enter"])
    expect(page.locator("#ask")).to_have_count(0)


def type_plan(page, name, plan, keys_of, answers_of, title):
    """Types the plan on the workspace and checks each step where it happens. Steps: ("answer", a): a's keys and
    Enter; ("rush", a, b): a, then b's whole sequence at once, while a is being saved; ("straddle", a, b): a, then
    b straddling the next item's showing (with "click" after it: then a click on the page, a fresh start that
    gives the keys back at once); ("flag", a): a's keys, a flag sent with Ctrl+Enter, then Enter;
    ("skip", a, send): a's keys, then the item skipped (sent with Ctrl+Enter, or Enter on the button).
    Screenshots: the page after the flag's Ctrl+Enter, and after the first refused burst (taken at once, while the
    keys are paused). Returns the labels expected and how many sequences were typed."""
    expected, sequences, shots = {}, 0, set()
    for step, meant, *more in plan:
        settle(page)
        item = on_screen(page)
        press(page, keys_of(meant))
        sequences += 1
        if step == "flag":
            dialog(page, "#flag", "Turn 2 cut off.", "ctrl")
            settle(page)
            assert item not in stored(name) and on_screen(page) == item, f"the flag's Ctrl+Enter submitted {item}"
            expect(page.locator("#notice")).to_have_text(FLAG_SENT)
            shot(page, f"keys-{name}-after-flag-ctrl-enter", title, "#notice")
            assert ItemFlag.objects.filter(item__external_id=item, author__username=name).count() == 1
            sequences += 1
        if step == "skip":
            dialog(page, "#skip", "Cannot judge.", more[0])
            settle(page)
            assert item not in stored(name), f"the skip's {more[0]} submitted {item}"
            lease = Assignment.objects.get(item__external_id=item, annotator__username=name)
            assert lease.status == LeaseStatus.RELEASED
            assert on_screen(page) != item
            sequences += 1
            continue
        press(page, ["Enter"])
        expected[item] = answers_of(meant)
        if step in ("rush", "straddle"):
            follow = [*keys_of(more[0]), "Enter"]
            if step == "rush":
                press(page, follow)
            else:
                landed = straddle(page, follow)
            said = refusal(page)
            if more[1:] == ["click"]:
                page.click("#dialogue")
                assert not page.locator(PAUSED).count(), "a click did not give the keys back"
            elif step not in shots:
                shots.add(step)
                SHOTS.mkdir(exist_ok=True)
                page.screenshot(path=str(SHOTS / f"keys-{name}-refused-{step}.png"), full_page=True)
            sequences += 1
            settle(page)
            shown = on_screen(page)
            for there in {shown, landed} if step == "straddle" else {shown}:
                assert there not in stored(name), f"the {step} sequence {follow} was stored on {there}"
            assert page.locator("#answer-form input:checked").count() == 0, f"the {step} chose on {shown}"
            assert "was not used" in said and "Keys are paused" in said, said
    settle(page)
    return expected, sequences


def diqad_plan(page, tmp_path, plan, first=lambda page: None):
    """Types `plan` on a DiQAD workspace of as many items, every request slowed down, after `first(page)`; checks
    the labels stored. Returns how many sequences the plan typed."""
    campaign, _ = diqad_campaign(tmp_path, {"ann1": "annotator"}, items=len(plan), overlap=1)
    open_workspace(page, "ann1", campaign)
    slow_everything(page)
    first(page)
    expected, sequences = type_plan(page, "ann1", plan, lambda a: diqad_keys(*a), lambda a: diqad_answers(*a), "Label")
    expect(page.locator("#done")).to_be_visible()
    assert stored("ann1") == expected
    return sequences


def empty_skip(page):
    """Ctrl+Enter in the skip dialog with no reason written: nothing is sent, from the dialog or from the page."""
    item = on_screen(page)
    press(page, diqad_keys(2, False))
    page.click("#skip")
    page.locator("#ask-text").press("Control+Enter")
    expect(page.locator("#ask .field-error")).to_be_visible()
    shot(page, "keys-skip-dialog-ctrl-enter-empty", "Label", "#ask .field-error")
    press(page, ["Escape"])
    expect(page.locator("#ask")).to_have_count(0)
    settle(page)
    assert on_screen(page) == item and not stored("ann1")


def test_the_skip_and_flag_dialogs_own_their_keys_on_the_workspace(page, tmp_path):
    plan = [("skip", (2, True), "ctrl"), ("flag", (0, True)), ("answer", (2, False)), ("skip", (1, True), "enter"),
            ("flag", (1, False)), ("answer", (0, False))]
    assert 1 + diqad_plan(page, tmp_path, plan, first=empty_skip) == 11
    skipped = Event.objects.filter(kind=EventKind.ITEM_SKIPPED).values_list("reason", flat=True)
    assert list(skipped) == ["Cannot judge."] * 2  # the reasons were kept


def test_a_burst_belongs_to_the_item_it_was_typed_on_in_the_workspace(page, tmp_path):
    plan = [("answer", (2, False)), ("straddle", (1, True), (0, False)), ("rush", (1, False), (2, True)),
            ("answer", (0, False)), ("straddle", (2, True), (1, False), "click"), ("answer", (1, True))]
    assert diqad_plan(page, tmp_path, plan) == 9


def test_blind_typist_on_the_gold_panel_votes(page, tmp_path):
    campaign = gold_panel_campaign(tmp_path, 7)
    open_workspace(page, "e1", campaign)
    slow_everything(page)
    # A vote's keys: its letter, or a letter corrected by another; the last one counts.
    plan = [("answer", "b"), ("straddle", "ac", "db"), ("skip", "c", "ctrl"), ("flag", "bd"), ("rush", "a", "c"),
            ("straddle", "a", "ba"), ("answer", "dc")]
    expected, sequences = type_plan(page, "e1", plan, list, lambda a: {"answer": a[-1].upper()}, "Label")
    assert sequences == 12
    expect(page.locator("#done")).to_be_visible()
    assert stored("e1") == expected


# The QC page and the expert's queue: a label is bound to its item when typed; keys are refused while the page loads.

def test_blind_typist_on_the_qc_page(page, tmp_path):
    batch = handed_in_batch(tmp_path, 8)
    sign_in(page, "qc")
    page.goto(f"/batches/{batch.pk}/review/")
    expect(page.locator("#start")).to_be_visible()
    slow_everything(page)
    page.click("#start")
    # A burst begun while the sample loads: its first key then, the rest as soon as the sample shows.
    press(page, ["2"])
    as_soon_as(page, ".sample-item input:not([disabled])", 8 * 6)
    press(page, ["1", "0"])
    said = refusal(page)
    keys_back(page)
    assert page.locator(".sample-item input:checked").count() == 0, "the burst typed while the sample loaded labelled"
    assert not QCSampleItem.objects.filter(review__batch=batch, qc_value__isnull=False).exists()
    assert "Key 0 was not used: it was typed right after a key that was not used." in said, said
    meant = ["2", "1", "0", "0", "2", "1", "1", "0"]
    press(page, meant)
    expect(page.locator(".sample-item.pending")).to_have_count(0)
    labels = QCSampleItem.objects.filter(review__batch=batch).order_by("position")
    assert list(labels.values_list("qc_value", flat=True)) == [int(k) for k in meant]
    # The decision's dialog owns Enter: the batch is rejected and no label changes.
    page.fill("#reason", "Too many wrong scores.")
    page.click("#reject")
    expect(page.locator("#ask")).to_be_visible()
    press(page, ["Enter"])
    expect(page.locator("#notice")).to_have_text("Batch rejected; it goes back to annotation (round 2).")
    assert list(labels.values_list("qc_value", flat=True)) == [int(k) for k in meant]
    assert 1 + 8 + 1 == 10  # sequences: the refused burst, one label per item, the dialog's Enter


def test_blind_typist_on_the_expert_queue(page, tmp_path):
    campaign = disagreeing_campaign(tmp_path, 6)
    sign_in(page, "expert")
    slow_everything(page)
    page.goto(f"/campaigns/{campaign.pk}/disagreements/")
    # Decisions for the first items typed while the queue loads: one whole, then one straddling its showing.
    press(page, ["1", "Enter"])
    press(page, ["0"])
    as_soon_as(page, ".disagreement", 6)
    press(page, ["Enter", "2", "Enter"])
    said = refusal(page)
    keys_back(page)
    assert page.locator(".disagreement input:checked").count() == 0, "a decision typed while the queue loaded"
    expect(page.locator(".disagreement.pending")).to_have_count(0)
    assert not Disagreement.objects.filter(status="resolved").exists()
    assert "was not used" in said, said
    order = [int(card.get_attribute("data-id")) for card in page.locator(".disagreement").all()]
    meant = ["1", "0", "2", "2", "1", "0"]
    press(page, [key for value in meant for key in (value, "Enter")])
    # One more after the last item, while the decisions are on their way: nothing to take it.
    press(page, ["2", "Enter"])
    said = refusal(page)
    expect(page.locator(".disagreement .decided")).to_have_count(6)
    decided = dict(Disagreement.objects.values_list("pk", "resolved_value"))
    assert [decided[pk] for pk in order] == [int(k) for k in meant]
    assert "was not used" in said, said
    assert 3 + 6 + 1 == 10  # sequences: the two refused while loading and the straddling one, 6 decisions, 1 extra


# The refusal in the annotators' languages.

@pytest.mark.parametrize(("language", "catalog"), [("ko", "ko"), ("zh-hans", "zh_Hans")])
def test_refused_keys_are_said_in_the_annotators_language(page, tmp_path, language, catalog):
    campaign, people = diqad_campaign(tmp_path, {"ann1": "annotator"}, items=2, overlap=1)
    Preferences.objects.create(user=people["ann1"], language=language)
    with open(Path(settings.LOCALE_PATHS[0]) / catalog / "LC_MESSAGES" / "djangojs.mo", "rb") as mo:
        translate = gettext.GNUTranslations(mo).gettext
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    slow_everything(page, 2 * DELAY_MS)  # long enough for the screenshots while the answer is on its way
    first = on_screen(page)
    press(page, [*diqad_keys(2, False), "Enter", *diqad_keys(1, True), "Enter"])
    saving = translate("your answer on item %(item)s is being saved").replace("%(item)s", first)
    refused = translate("Key %(key)s was not used: %(what)s.").replace("%(key)s", "Enter").replace("%(what)s", saving)
    paused = translate("Keys are paused so that nothing typed for one item lands on another: stop typing for a moment "
                       "(or click the page), then type again.")
    expect(page.locator(PAUSED)).to_have_text(translate("%(refused)s %(paused)s").replace("%(refused)s", refused)
                                              .replace("%(paused)s", paused))
    shot(page, f"keys-refused-{language}", "", PAUSED)
    settle(page)
    expect(page.locator("#keys-paused")).to_have_text(translate("Keys work again."))
    assert list(stored("ann1")) == [first]
