"""Labels typed faster than the server answers land on the item they were typed on, and a key answers the
question its chip shows: DiQAD's score first, then the yes/no answer, then Enter; the QC's keys, the
expert's decisions and the gold panel's votes with every request slowed down in the browser."""
import re

import pytest

from annotation import actions
from annotation.models import Annotation, Disagreement, QCSampleItem
from tests.frontend.conftest import diqad_item, make_campaign, submit_score, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GAP_MS = 50  # between two keys: far less than the slowed server takes to answer
# DiQAD's reasons by their key: the second of each list.
REASON_KEY, REASON = "2", {1: "less_informative", 0: "not_relevant"}
VERIFY = "Does the answer need verification against external knowledge?"
# What each annotator means for each item: (score, needs_verification).
MEANT = {
    "ann1": {"x-001": (2, True), "x-002": (1, False), "x-003": (0, True), "x-004": (2, False), "x-005": (1, True),
             "x-006": (0, False)},
    "ann2": {"x-001": (2, True), "x-002": (0, False), "x-003": (0, False), "x-004": (1, True), "x-005": (1, True),
             "x-006": (2, False)},
}
# The last label of a batch adds that the batch is complete (the same words whatever the peers answered).
SAVED_WITH_A_REFUSED_KEY = re.compile(r"^(Saved\.|Your answer on item \S+ was changed\.)( Batch \d+ is complete\.)? "
                                      r"1 key pressed while it was being saved was not used\.$")


def slow(page, pattern, ms):
    """Each request matching `pattern` reaches the server `ms` later, while the page and the typing go on."""
    def delayed(route):
        page.wait_for_timeout(ms)
        route.continue_()
    page.route(pattern, delayed)


def type_keys(page, keys):
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(GAP_MS)


def diqad_answers(score, needs):
    return {"score": score, "needs_verification": needs,
            **({f"reasons_{score}": [REASON[score]]} if score in REASON else {})}


def diqad_keys(score, needs, yes_no_before_reason=False):
    """The score first; then, for scores 0 and 1, a reason and the yes/no answer, in either order."""
    yes_no, reason = ["y" if needs else "n"], [REASON_KEY] if score in REASON else []
    return [str(score), *(yes_no + reason if yes_no_before_reason else reason + yes_no)]


def diqad_campaign(tmp_path, roles, items=6, **settings):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in range(1, items + 1)]), "diqad", "dq")
    people = {name: make_user(name) for name in ("boss", *roles)}
    values = {"overlap": 2, "batch_size": items, "qc_sample_size": 1, "min_reading_seconds": 0, "seed": 1,
              "auto_hand_in": False, **settings}
    campaign = make_campaign(people["boss"], people, "dq", roles=roles, **values)
    actions.cut_batches(campaign, actor=people["boss"])
    return campaign, people


def handed_in_batch(tmp_path, items):
    """A DiQAD batch of `items` items, all scored 2 by its annotator, handed in to its QC with every item sampled."""
    campaign, people = diqad_campaign(tmp_path, {"ann1": "annotator", "qc": "qc"}, items=items, overlap=1,
                                      qc_sample_size=items)
    batch = campaign.batches.get()
    while lease := actions.lease_next_item(campaign, annotator=people["ann1"]):
        submit_score(lease.assignment, people["ann1"], 2)
    actions.hand_in_batch(batch, actor=people["ann1"])
    return batch


def disagreeing_campaign(tmp_path, items):
    """A DiQAD campaign whose two annotators disagree on each of its `items` items, for its expert."""
    campaign, people = diqad_campaign(tmp_path, {"ann1": "annotator", "ann2": "annotator", "expert": "expert"},
                                      items=items, disagreement_policy="adjudicate")
    for name, score in (("ann1", 1), ("ann2", 0)):
        while lease := actions.lease_next_item(campaign, annotator=people[name]):
            submit_score(lease.assignment, people[name], score)
    return campaign


def gold_panel_campaign(tmp_path, items):
    """A DialogBench gold panel of two experts, e1 and e2, on `items` items db-1, db-2..."""
    from benchmarks.actions import import_items

    items = [{"id": f"db-{n}", "task": "emotion_detection",
              "dialogue": ["speaker1: I passed!", f"speaker2: Well done {n}."],
              "options": {"A": "Anger", "B": "Joy", "C": "Fear", "D": "Sadness"}, "label": "B"}
             for n in range(1, items + 1)]
    import_items(write_items(tmp_path / "db.jsonl", items), "dialogbench", "db")
    people = {name: make_user(name) for name in ("boss", "e1", "e2")}
    campaign = make_campaign(people["boss"], people, "db", protocol="gold_panel",
                             roles={"e1": "expert", "e2": "expert"}, overlap=2, batch_size=len(items),
                             qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=people["boss"])
    return campaign


def open_workspace(page, name, campaign):
    sign_in(page, name)
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn, #done:not([hidden])")


def label_in_turns(pages, keys_for, stray):
    """Each person types the keys for the item on their screen and Enter, then at once one more key (`stray`),
    pressed while that item is being saved: the page must refuse it and say so, never keep it for the next
    item, and takes keys again once the keyboard has been quiet for a moment. The people take turns, so that one's
    label is on its way while the other types."""
    waiting = set()
    while pages:
        for name, page in list(pages.items()):
            if name in waiting:
                expect(page.locator("#notice")).to_have_text(SAVED_WITH_A_REFUSED_KEY)
                expect(page.locator("[data-keys='paused']")).to_have_count(0)
            if page.locator("#done").is_visible():
                del pages[name]
                continue
            item = page.text_content("#item-id").removeprefix("Item ").strip()
            type_keys(page, [*keys_for(name, item), "Enter", stray])
            waiting.add(name)


def stored(name):
    return {a.item.external_id: a.answers
            for a in Annotation.objects.filter(annotator__username=name).select_related("item")}


def test_diqad_asks_the_score_first_and_saves_only_what_was_answered(page, tmp_path):
    campaign, _ = diqad_campaign(tmp_path, {"ann1": "annotator"}, items=2, overlap=1)
    open_workspace(page, "ann1", campaign)
    legends = page.locator("#answer-form fieldset.question:not([hidden]) legend").all_text_contents()
    assert legends == ["1. Quality (required)", f"2. {VERIFY} (required)"], legends
    chips = page.locator("#answer-form fieldset.question:not([hidden]) kbd").all_text_contents()
    assert chips[:3] == ["2", "1", "0"] and chips[-2:] == ["Y", "N"], chips  # one key per option, on its chip
    sent = []
    page.on("request", lambda request: "/submit/" in request.url and sent.append(request.url))
    page.keyboard.press("1")  # the score, never the yes/no answer
    expect(page.locator("[data-key='score'] input:checked + kbd")).to_have_text("1")
    assert page.locator("[data-key='needs_verification'] input:checked").count() == 0
    # Key 2 now chooses the second reason of a 1, and the score's chip 2 shows that it does not answer the score.
    expect(page.locator("[data-key='score'] label.choice", has_text="2: meets").locator("kbd")).to_have_class("idle")
    expect(page.locator("[data-key='score'] label.choice", has_text="2: meets")).to_have_attribute(
        "title", "Key 2 answers “Why 1?” now")
    page.keyboard.press("2")
    expect(page.locator("[data-key='reasons_1'] input:checked")).to_have_count(1)
    page.keyboard.press("Enter")  # the yes/no question has no answer: nothing is sent
    expect(page.locator("#notice.error")).to_have_text(f"Not saved: answer “{VERIFY}” first.")
    expect(page.locator("[data-key='needs_verification'] .field-error")).to_be_visible()
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"annotate-diqad-unanswered-{width}", "Label", "[data-key='needs_verification'] .field-error")
    assert sent == []
    type_keys(page, ["n", "Enter"])
    expect(page.locator("#notice")).to_have_text("Saved.")
    assert len(sent) == 1 and list(stored("ann1").values()) == [diqad_answers(1, False)]


def test_two_annotators_type_the_score_first_faster_than_the_server(page, second_page, tmp_path):
    campaign, _ = diqad_campaign(tmp_path, {"ann1": "annotator", "ann2": "annotator"})
    pages = {"ann1": page, "ann2": second_page}
    for name, each in pages.items():
        open_workspace(each, name, campaign)
        slow(each, "**/api/v1/**", 800)
    # ann1 gives a reason before the yes/no answer, ann2 after it.
    label_in_turns(pages, lambda name, item: diqad_keys(*MEANT[name][item], yes_no_before_reason=name == "ann2"),
                   stray="1")
    for name in ("ann1", "ann2"):
        assert stored(name) == {item: diqad_answers(*meant) for item, meant in MEANT[name].items()}, name


def test_changing_the_last_answer_by_keyboard_faster_than_the_server(page, second_page, tmp_path):
    campaign, people = diqad_campaign(tmp_path, {"ann1": "annotator", "ann2": "annotator"}, items=3)
    last = {}
    for name, score in (("ann1", 2), ("ann2", 0)):
        while lease := actions.lease_next_item(campaign, annotator=people[name]):
            last[name] = submit_score(lease.assignment, people[name], score).annotation
    before = {name: last[name].answers for name in last}
    change = {"ann1": (1, True), "ann2": (2, False)}
    pages = {"ann1": page, "ann2": second_page}
    for name, each in pages.items():
        open_workspace(each, name, campaign)
        slow(each, "**/api/v1/**", 800)
        each.locator("#change-last-done").focus()
        each.keyboard.press("Enter")
        expect(each.locator("#editing")).to_be_visible()
        expect(each.locator("#item-id")).to_have_text(f"Item {last[name].item.external_id}")
        assert each.locator("fieldset.question legend").first.text_content().startswith("1. Quality")
    shot(page, "annotate-change-last-score-first", "Label", "#editing")
    for name, each in pages.items():
        type_keys(each, [*diqad_keys(*change[name]), "Enter", "0"])
    for name, each in pages.items():
        expect(each.locator("#notice")).to_have_text(SAVED_WITH_A_REFUSED_KEY)
        assert Annotation.objects.get(pk=last[name].pk).answers == diqad_answers(*change[name]), name
        # Only the last answer changed.
        assert [a for a in stored(name).values() if a != before[name]] == [diqad_answers(*change[name])]


def test_six_qc_labels_typed_50_ms_apart_land_each_on_its_own_item(page, tmp_path):
    batch = handed_in_batch(tmp_path, 6)
    sign_in(page, "qc")
    page.goto(f"/batches/{batch.pk}/review/")
    page.click("#start")
    page.wait_for_selector("#decide:not([hidden])")
    expect(page.locator(".sample-item input:not([disabled])")).to_have_count(6 * 6)
    slow(page, "**/qc_label/", 1000)
    meant = ["2", "1", "0", "2", "0", "1"]
    type_keys(page, meant)
    # Each label shows on its item at once, while it is on its way.
    checked = page.locator(".sample-item input:checked + kbd")
    assert checked.all_text_contents() == meant
    expect(page.locator(".sample-item.pending")).to_have_count(0)
    assert checked.all_text_contents() == meant
    labels = QCSampleItem.objects.filter(review__batch=batch)
    assert list(labels.order_by("position").values_list("qc_value", flat=True)) == [int(k) for k in meant]
    assert (list(labels.order_by("qc_at").values_list("position", flat=True))
            == sorted(labels.values_list("position", flat=True)))


def test_expert_decisions_typed_50_ms_apart_land_each_on_its_own_item(page, tmp_path):
    campaign = disagreeing_campaign(tmp_path, 3)
    sign_in(page, "expert")
    page.goto(f"/campaigns/{campaign.pk}/disagreements/")
    cards = page.locator(".disagreement")
    expect(cards).to_have_count(3)
    expect(cards.locator(".labels > li")).to_have_count(6)
    order = [int(card.get_attribute("data-id")) for card in cards.all()]
    slow(page, "**/resolve/", 1000)
    meant = ["1", "0", "2"]
    type_keys(page, [key for value in meant for key in (value, "Enter")])
    expect(page.locator(".disagreement .decided")).to_have_count(3)
    assert page.locator(".disagreement .decided").all_text_contents() == [
        "Decided: 1: answers but lacks proactivity or informativeness",
        "Decided: 0: fails a basic dimension (grammar, relevance, consistency, empathy)",
        "Decided: 2: meets all dimensions"]
    decided = dict(Disagreement.objects.values_list("pk", "resolved_value"))
    assert [decided[pk] for pk in order] == [int(k) for k in meant]
    expect(page.locator("#settled tr")).to_have_count(3)


def test_gold_panel_votes_typed_faster_than_the_server(page, second_page, tmp_path):
    campaign = gold_panel_campaign(tmp_path, 4)
    meant = {"e1": {"db-1": "B", "db-2": "C", "db-3": "A", "db-4": "D"},
             "e2": {"db-1": "B", "db-2": "D", "db-3": "A", "db-4": "C"}}
    pages = {"e1": page, "e2": second_page}
    for name, each in pages.items():
        open_workspace(each, name, campaign)
        slow(each, "**/api/v1/**", 800)
    label_in_turns(pages, lambda name, item: [meant[name][item].lower()], stray="a")
    for name in meant:
        assert stored(name) == {item: {"answer": letter} for item, letter in meant[name].items()}, name
