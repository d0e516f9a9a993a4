"""What people are shown of an item and of a campaign: a released DialogBench item without its prompts (written
for models), the task's released name beside ours for the manager, active selection's cut telling what it drew
and left out, an expert's dashboard linking only to pages the expert may open, DiQAD's questions numbered 1, 2, 3
as its paper's form (Figure 6) has them."""
import pytest
from django.urls import reverse

from annotation import actions
from benchmarks.actions import import_items
from tests.annotation.test_active_selection import active, judge
from tests.frontend.conftest import diqad_item, make_campaign, write_items
from tests.reliability.test_model_fields import PRETRAIN_INSTRUCTION, SFT_INSTRUCTION, write_released

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def manager():
    boss = make_user("boss")
    boss.is_staff = True
    boss.save()
    return boss


def test_annotator_sees_a_released_dialogbench_item_without_its_prompts(page, tmp_path):
    import_items(write_released(tmp_path, 2), "dialogbench_released", "db-released")
    boss, ann = manager(), make_user("ann1")
    campaign = make_campaign(boss, {"ann1": ann}, "db-released", protocol="human_baseline",
                             roles={"ann1": "annotator"}, overlap=1, batch_size=2, min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    page.wait_for_selector("#item:not([hidden]) .turn")
    item = page.locator("#item").inner_text()
    assert "Can you book a table" in item and "What does speaker1 want?" in item and "Book a table" in item
    body = page.locator("body").inner_text()
    for hidden in ("prompt SFT", "prompt pretrain", "Prompt SFT", SFT_INSTRUCTION, PRETRAIN_INSTRUCTION):
        assert hidden not in body, hidden
    expect(page.locator("#fields h3", has_text="Question")).to_be_visible()
    shot(page, "annotate-released-dialogbench", "Label", "#fields h3")


def test_manager_sees_the_released_task_name_beside_ours(page, tmp_path):
    import_items(write_released(tmp_path, 2), "dialogbench_released", "db-released")
    manager()
    sign_in(page, "boss")
    page.goto(reverse("manage-campaign-new") + "?benchmark=db-released")
    expect(page.locator("label", has_text="Intent classification (in the source data: Conversational_QA)")) \
        .to_be_visible()
    shot(page, "manage-released-task-names", "New campaign", "#id_tasks")


def test_active_selection_cut_says_what_it_drew_and_left_out(page, tmp_path):
    import_items(write_items(tmp_path / "sixty.jsonl", [diqad_item(n, label=2 if n % 2 else 0)
                                                         for n in range(1, 61)]), "diqad", "dq-sixty")
    from benchmarks.models import Benchmark

    benchmark = Benchmark.objects.get(slug="dq-sixty")
    campaign = active(manager(), {}, benchmark, judge(benchmark), roles={})
    sign_in(page, "boss")
    page.goto(reverse("manage-campaign", args=[campaign.pk]))
    page.click("#cut-batches")
    message = page.locator(".messages, [role=status], .notice").filter(has_text="Active selection drew").first
    expect(message).to_contain_text("of 60 items and left")
    expect(message).to_contain_text("Inclusion probabilities of the items drawn:")
    page.locator("#active-draw summary").click()
    expect(page.locator("#active-draw-items tbody tr").first).to_be_visible()
    shot(page, "manage-active-selection-cut", campaign.name, "#active-draw")


def test_every_link_of_the_experts_dashboard_opens_for_the_expert(page, tmp_path):
    """The dashboard once linked each batch to its QC review page, which experts may not open (5 batches: five
    403s). Every link on the page, as the expert sees it, is followed with the expert's session."""
    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(n) for n in range(1, 11)]), "diqad", "dq")
    boss, expert = manager(), make_user("expert")
    campaign = make_campaign(boss, {"expert": expert}, "dq", roles={"expert": "expert"}, overlap=1, batch_size=2,
                             min_reading_seconds=0, seed=1)
    assert len(actions.cut_batches(campaign, actor=boss)) == 5
    sign_in(page, "expert")
    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    expect(page.locator("#batches tr")).to_have_count(5)
    every = page.locator("a[href]").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
    hrefs = {href for href in every if not href.startswith("#")}
    assert hrefs, "no link on the dashboard"
    refused = [f"{href}: {status}" for href in sorted(hrefs)
               if (status := page.request.get(href).status) >= 400]
    assert not refused, refused
    expect(page.locator("#batches")).to_contain_text("Batch 1")
    shot(page, "expert-dashboard", "Dashboard", "#batches tr")


def test_diqad_questions_are_numbered_one_two_three(page, tmp_path):
    import_items(write_items(tmp_path / "dq.jsonl", [diqad_item(1)]), "diqad", "dq")
    boss, ann = manager(), make_user("ann1")
    campaign = make_campaign(boss, {"ann1": ann}, "dq", roles={"ann1": "annotator"}, overlap=1, batch_size=1,
                             min_reading_seconds=0, seed=1)
    actions.cut_batches(campaign, actor=boss)
    sign_in(page, "ann1")
    page.goto(f"/campaigns/{campaign.pk}/annotate/")
    legends = page.locator("#answer-form fieldset.question:not([hidden]) legend")
    expect(legends).to_have_count(2)
    for score, reason in (("0", "Why 0?"), ("1", "Why 1?")):
        page.locator("fieldset[data-key=score] label.choice", has_text=f"{score}: ").first.click()
        expect(legends).to_have_count(3)
        numbers = [text.split(".")[0] for text in legends.all_text_contents()]
        assert numbers == ["1", "2", "3"], legends.all_text_contents()
        assert legends.nth(2).text_content().startswith(f"3. {reason}")
    shot(page, "diqad-questions-numbered", "Label", "#answer-form")
