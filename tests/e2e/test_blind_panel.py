"""A gold panel's expert decides a tie blind in the browser: the item and the decision, nobody's name or vote."""
import pytest

from annotation import actions
from annotation.models import Disagreement
from tests.frontend.conftest import diqad_item, make_campaign, submit_score, write_items

from .conftest import make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PANEL = ("panel-alpha", "panel-bravo", "panel-charlie", "panel-delta")


def test_panel_expert_decides_a_tie_without_seeing_the_votes(page, tmp_path):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "panel.jsonl", [diqad_item(n) for n in range(1, 5)]), "diqad", "panel")
    boss = make_user("boss")
    boss.is_staff = True
    boss.save()
    people = {name: make_user(name) for name in PANEL}
    campaign = make_campaign(boss, people, "panel", protocol="gold_panel", overlap=3, batch_size=4,
                             min_reading_seconds=0, roles={name: "expert" for name in PANEL})
    actions.cut_batches(campaign, actor=boss)
    for name, score in zip(PANEL, (2, 1, 0), strict=False):  # a three-way tie on the first item
        submit_score(actions.lease_next_item(campaign, annotator=people[name]).assignment, people[name], score)
    disagreement = Disagreement.objects.get(campaign=campaign)
    sign_in(page, "panel-delta")  # did not vote on it, so may decide it
    page.goto(f"/campaigns/{campaign.pk}/disagreements/")
    card = page.locator(f".disagreement[data-id='{disagreement.pk}']")
    card.wait_for()
    text = card.text_content()
    assert "votes blind" in text and not any(name in text for name in PANEL[:3])
    shot(page, "panel-blind-disagreement", "Disagreements", ".disagreement")
    card.locator("label.choice").nth(0).click()
    card.locator("textarea").fill("Decided on the item alone.")
    card.locator("button[type=submit]").click()
    page.wait_for_selector("#notice.ok")
    disagreement.refresh_from_db()
    assert disagreement.status == "resolved" and disagreement.resolved_by == people["panel-delta"]
    assert not any(name in page.content() for name in PANEL[:3])
