"""The expert's queue: answers and decisions by their labels, each rater's reasons and comments beside
them, no names for a gold panel's voting experts, one request however often Decide is clicked; flags
on the trainers', experts' and managers' pages."""
import pytest

from annotation import actions
from annotation.models import Disagreement
from tests.annotation.conftest import DIQAD_ANSWERS, sid
from tests.frontend.conftest import diqad_item, make_campaign, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def disagreeing(tmp_path, protocol, workers):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(1)]), "diqad", "dq")
    people = {name: make_user(name) for name in ("boss", *workers, "expert", "trainer")}
    role = "expert" if protocol == "gold_panel" else "annotator"
    roles = {**{w: role for w in workers}, "expert": "expert", "trainer": "trainer"}
    campaign = make_campaign(people["boss"], people, "dq", protocol=protocol, roles=roles, overlap=2, batch_size=1,
                             qc_sample_size=1, min_reading_seconds=0, seed=1, disagreement_policy="adjudicate")
    actions.cut_batches(campaign, actor=people["boss"])
    for name, score in zip(workers, (1, 0), strict=False):
        lease = actions.lease_next_item(campaign, annotator=people[name])
        actions.submit_annotation(lease.assignment, annotator=people[name], answers=DIQAD_ANSWERS[score],
                                  client_submission_id=sid())
        if score == 1:
            actions.flag_item(lease.assignment, actor=people[name], comment="The expert's turn is cut off.")
    return campaign, Disagreement.objects.get(campaign=campaign)


def open_queue(page, campaign, disagreement, answers=2):
    sign_in(page, "expert")
    page.goto(f"/campaigns/{campaign.pk}/disagreements/")
    card = page.locator(f".disagreement[data-id='{disagreement.pk}']")
    if answers:
        expect(card.locator(".labels > li")).to_have_count(answers)
    else:
        expect(card.locator(".blind")).to_be_visible()
    return card


def test_expert_reads_labels_reasons_and_comments_and_decides_once(page, tmp_path):
    campaign, disagreement = disagreeing(tmp_path, "production", ("ann1", "ann2"))
    card = open_queue(page, campaign, disagreement)
    answers = card.locator(".labels").inner_text()
    assert "ann1: 1: answers but lacks proactivity or informativeness" in answers
    assert "Why 1?: incomplete" in answers and "Why 0?: not relevant" in answers
    assert "0: fails a basic dimension" in answers and '"' not in answers  # labels, not raw JSON values
    expect(card.locator(".flags")).to_contain_text("ann1, round 1: The expert's turn is cut off.")
    expect(page.locator("#flags")).to_contain_text("The expert's turn is cut off.")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"expert-queue-{width}", "Disagreements", ".disagreement .labels")
    card.locator("label.choice").nth(1).click()
    sent = []
    page.on("request", lambda request: "/resolve/" in request.url and sent.append(request.url))
    card.locator("button[type=submit]").dblclick()
    expect(page.locator("#notice.ok")).to_contain_text("decided: 1: answers but lacks")
    assert len(sent) == 1
    expect(page.locator("#settled")).to_contain_text("1: answers but lacks proactivity or informativeness")
    disagreement.refresh_from_db()
    assert disagreement.status == "resolved" and disagreement.resolved_value == 1


def test_gold_panel_voters_see_no_votes_and_no_names(page, tmp_path):
    campaign, disagreement = disagreeing(tmp_path, "gold_panel", ("e1", "e2"))
    open_queue(page, campaign, disagreement, answers=0)
    text = page.locator("main").inner_text()
    assert "votes blind: the answers are not shown" in text
    expect(page.locator(".disagreement .labels > li")).to_have_count(0)  # nobody's answer, by label or value
    names = page.locator(".flags .who").all_text_contents()
    assert names and all(name.startswith("Rater ") for name in names), names


def test_manager_dashboard_lists_flags(page, tmp_path):
    campaign, _ = disagreeing(tmp_path, "production", ("ann1", "ann2"))
    sign_in(page, "boss")
    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    expect(page.locator("#flags-card")).to_be_visible()
    expect(page.locator("#flags")).to_contain_text("The expert's turn is cut off.")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"dashboard-flags-{width}", "Dashboard", "#flags-card")
