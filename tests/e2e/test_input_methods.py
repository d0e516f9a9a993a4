"""Input methods (IME): Chinese or Korean is typed through a composition, and the keys pressed while it is open
belong to it. Enter (or Ctrl+Enter) mid-composition finishes the composition and never submits; a shortcut key
never fires inside one. The composition is simulated as Chromium sends it: compositionstart, keydown events with
isComposing true and keyCode 229, compositionend, and (as some browsers do) the closing Enter with keyCode 229
after compositionend."""
import pytest

from annotation import actions
from annotation.models import Annotation
from benchmarks.models import Task
from tests.frontend.conftest import diqad_item, make_campaign, write_items

from .conftest import expect, make_user, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "回答没有给出具体的法律条款"

# Runs in the page: one composition on the focused text box, with `keys` pressed while it is open.
COMPOSE = """([text, keys, after]) => {
  const box = document.activeElement;
  const key = (init) => box.dispatchEvent(new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init }));
  box.dispatchEvent(new CompositionEvent("compositionstart", { bubbles: true, data: "" }));
  // The text being composed is in the box already (as Chromium shows it), then the keys come.
  box.value += text;
  box.dispatchEvent(new InputEvent("input", {
    bubbles: true, data: text, inputType: "insertCompositionText", isComposing: true }));
  for (const k of keys) key({ key: k.key, code: k.key, ctrlKey: !!k.ctrl, isComposing: true, keyCode: 229 });
  box.dispatchEvent(new CompositionEvent("compositionend", { bubbles: true, data: text }));
  // The Enter that closed the composition, sent after compositionend (isComposing false, keyCode 229).
  if (after) key({ key: "Enter", code: "Enter", keyCode: 229 });
  return box.value;
}"""


@pytest.fixture
def diqad_with_reason(tmp_path):
    """A DiQAD batch whose form asks for a written reason (the Chinese QC practice), for one annotator."""
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in (1, 2)]), "diqad", "dq")
    task = Task.objects.get(benchmark__slug="dq")
    task.form["questions"].append({"key": "reason", "type": "text", "label": "理由", "required": False})
    task.save(update_fields=["form"])
    boss, ann = make_user("boss"), make_user("ann1")
    campaign = make_campaign(boss, {"ann1": ann}, "dq", roles={"ann1": "annotator"}, overlap=1, batch_size=10,
                             qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    return campaign


def test_enter_mid_composition_stores_nothing_and_the_label_is_the_intended_one(page, diqad_with_reason):
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{diqad_with_reason.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    first = page.text_content("#item-id")
    for key in ("1", "2", "n"):  # score 1, its second reason, no verification needed
        page.keyboard.press(key)
    page.focus("#q-reason")
    # Enter, Ctrl+Enter (the text box's submit key) and a score key while the composition is open: all its own.
    typed = page.evaluate(COMPOSE, [REASON[:6], [{"key": "Enter"}, {"key": "Enter", "ctrl": True}, {"key": "2"}], True])
    assert typed == REASON[:6]
    typed = page.evaluate(COMPOSE, [REASON[6:], [{"key": "Enter", "ctrl": True}, {"key": "g"}], True])
    assert typed == REASON
    page.wait_for_timeout(500)  # a submission would have been sent by now
    assert not Annotation.objects.exists()
    expect(page.locator("#item-id")).to_have_text(first)
    expect(page.locator("#guidelines")).to_be_hidden()
    assert page.locator("#q-score-1").is_checked()
    # With the composition closed, Ctrl+Enter submits what was meant.
    page.keyboard.press("Control+Enter")
    expect(page.locator("#item-id")).not_to_have_text(first)
    label = Annotation.objects.get()
    assert label.answers == {"score": 1, "reasons_1": ["less_informative"], "needs_verification": False,
                             "reason": REASON}


def test_a_shortcut_never_fires_inside_a_composition_in_the_skip_dialog(page, diqad_with_reason):
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{diqad_with_reason.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    page.click("#skip")
    page.focus("#ask-text")
    page.evaluate(COMPOSE, ["内容重复", [{"key": "Enter", "ctrl": True}], False])
    page.wait_for_timeout(300)
    expect(page.locator("#ask")).to_be_visible()  # the dialog is still open: nothing was sent
    assert page.input_value("#ask-text") == "内容重复"
