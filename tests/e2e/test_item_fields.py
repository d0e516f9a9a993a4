"""DialogBench items are shown as readable text, in the item's language, in the workspace and in the
gold panel's vote."""
import pytest

from annotation import actions
from annotation.models import Disagreement
from tests.annotation.conftest import sid
from tests.frontend.conftest import make_campaign, write_items

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ITEM = {
    "id": "db-nli-1", "task": "dialogue_nli", "domain": "daily life", "language": "en",
    "personality": {"speaker1": "outgoing, talkative", "speaker2": {"traits": ["calm", "reserved"]}},
    "dialogue": ["speaker1: I passed my driving test!", "speaker2: Well done, I knew you would."],
    "question": "Does the premise entail the hypothesis?",
    "premise": "Speaker1 passed the test.", "hypothesis": "Speaker1 failed the test.",
    "knowledge": ["Driving tests are hard.", {"fact": "Many need three tries."}],
    "persona": {"speaker1": ["likes cars", "nervous"]}, "response": "Congratulations!",
    "options": {"A": "entailment", "B": "neutral", "C": "contradiction"}, "label": "C",
}
SHOWN = ("outgoing, talkative", "calm", "reserved", "Speaker1 passed the test.", "Speaker1 failed the test.",
         "Many need three tries.", "likes cars", "Congratulations!", "contradiction")


def assert_readable(page, where, name, title):
    """Every field readable, no "[object", the item's language set; screenshots at both widths."""
    text = page.locator(where).inner_text()
    assert "[object" not in page.locator("body").inner_text(), text
    for fragment in SHOWN:
        assert fragment in text, (fragment, text)
    assert page.locator(f"{where} [lang='en']").count() >= 1
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"{name}-{width}", title, f"{where} dl")


@pytest.fixture
def benchmark(tmp_path):
    from benchmarks.actions import import_items

    import_items(write_items(tmp_path / "db.jsonl", [ITEM]), "dialogbench", "db-fields")
    return "db-fields"


def test_workspace_shows_every_field_as_text(page, benchmark):
    boss, ann = make_user("boss"), make_user("ann1")
    campaign = make_campaign(boss, {"ann1": ann}, benchmark, roles={"ann1": "annotator"}, overlap=1, batch_size=5,
                             qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    assert_readable(page, "#item", "annotate-dialogbench", "Label")


def test_gold_vote_shows_every_field_as_text(page, benchmark):
    people = {name: make_user(name) for name in ("boss", "e1", "e2", "e3", "e4")}
    campaign = make_campaign(people["boss"], people, benchmark, protocol="gold_panel",
                             roles={name: "expert" for name in ("e1", "e2", "e3", "e4")}, overlap=3, batch_size=5,
                             qc_sample_size=1, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=people["boss"])
    for name, answer in (("e1", "A"), ("e2", "B"), ("e3", "C")):  # a three-way tie: the panel must vote
        lease = actions.lease_next_item(campaign, annotator=people[name])
        actions.submit_annotation(lease.assignment, annotator=people[name], answers={"answer": answer},
                                  client_submission_id=sid())
    assert Disagreement.objects.filter(campaign=campaign, status="open").count() == 1
    sign_in(page, "e4")
    page.goto(f"/campaigns/{campaign.pk}/disagreements/")
    page.wait_for_selector(".disagreement .turn")
    assert_readable(page, ".disagreement", "gold-vote-dialogbench", "Disagreements")
    expect(page.locator(".disagreement")).to_have_count(1)
