"""In the browser: the expert's queue shows an answer changed after the peer's label as such (first answer
beside it, the disagreement still open), and a blind QC's review page names no labeller and shows no label
before the QC's own, in the sample, the history and the annotator figures alike."""
import pytest

from annotation import actions
from annotation.models import Annotation
from tests.annotation.conftest import DIQAD_ANSWERS
from tests.frontend.conftest import diqad_item, make_campaign, submit_score, write_items

from .conftest import expect, make_user, shot, sign_in
from .test_expert_pages import disagreeing, open_queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_expert_sees_an_answer_changed_after_the_peers_label(page, tmp_path):
    campaign, disagreement = disagreeing(tmp_path, "production", ("ann1", "ann2"))
    ann2 = Annotation.objects.get(annotator__username="ann2")
    actions.amend_annotation(ann2, annotator=ann2.annotator, answers=DIQAD_ANSWERS[1])  # now as ann1 answered
    card = open_queue(page, campaign, disagreement)
    answers = card.locator(".labels")
    expect(answers.locator(".amended")).to_have_count(1)
    expect(answers.locator(":scope > li").nth(1)).to_contain_text(
        "ann2: 1: answers but lacks proactivity or informativeness (changed after the other answer was in; "
        "first answer: 0: fails a basic dimension")
    expect(card.locator("form.decision")).to_be_visible()  # still open: the change did not close it
    shot(page, "expert-amended-after-peer", "Disagreements", ".disagreement .amended")


def test_a_blind_qc_page_names_no_labeller_before_the_qcs_own_label(page, tmp_path):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in range(1, 5)]), "diqad", "dq")
    people = {name: make_user(name) for name in ("boss", "zq-rater", "qc")}
    campaign = make_campaign(people["boss"], people, "dq", roles={"zq-rater": "annotator", "qc": "qc"}, overlap=1,
                             batch_size=4, qc_sample_size=2, min_reading_seconds=0, seed=1, qc_blind=True)
    [batch] = actions.cut_batches(campaign, actor=people["boss"])
    while lease := actions.lease_next_item(campaign, annotator=people["zq-rater"]):
        submit_score(lease.assignment, people["zq-rater"], 2)
    last = Annotation.objects.latest("submitted_at")
    actions.amend_annotation(last, annotator=people["zq-rater"], answers=DIQAD_ANSWERS[1])
    actions.hand_in_batch(batch, actor=people["zq-rater"])
    sign_in(page, "qc")
    page.goto(f"/batches/{batch.pk}/review/")
    page.click("#start")
    page.wait_for_selector("#decide:not([hidden])")
    expect(page.locator("#history tr")).not_to_have_count(0)
    expect(page.locator("#blind-note")).to_be_visible()
    main = page.locator("main").inner_text()
    assert "zq-rater" not in main and "label_changed" not in main
    assert page.locator(".sample-item .final").all_text_contents() == ["hidden until you give your label"] * 2
    shot(page, "qc-blind-history", "QC", "#history tr")
    page.keyboard.press("2")
    expect(page.locator(".sample-item input:checked")).to_have_count(1)
    expect(page.locator(".sample-item .final").nth(0)).to_have_text("2: meets all dimensions")
    assert "zq-rater" not in page.locator("#history").inner_text()
