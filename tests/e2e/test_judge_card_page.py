"""The report page in Chromium: a judge card for a judge run here and one for a judge whose verdicts were
imported, each with its agreement, the alternative annotator test's verdict and the labels it saves."""
import json

import pytest

from annotation.models import Membership
from modeleval.verdicts import import_verdicts
from tests.reports import factories

from .conftest import SHOTS, expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_report_page_shows_a_card_per_judge(page, tmp_path):
    bench, items, answers = factories.demo_three_raters()
    wrong = factories.wrong_option
    # people label two thirds of the items; the judges answer all of them
    labelled = {pk: votes for n, (pk, votes) in enumerate(answers.items()) if n % 3 != 2}
    campaign = factories.human_campaign(bench, labelled, name="DialogBench demo: human baseline")
    factories.model_run(bench, list(bench.tasks.all()), "demo-model", {
        i.pk: {"answer": i.source_gold["answer"] if n % 2 else wrong(i),
               "options": factories.options_for({k: -1.0 if k == i.source_gold["answer"] else -2.0
                                                 for k in i.fields["options"]})}
        for n, i in enumerate(items)})
    emotion = items[0].task
    path = tmp_path / "api-judge.jsonl"
    path.write_text("".join(json.dumps({"item": i.external_id, "answer": i.source_gold["answer"]}) + "\n"
                            for i in items if i.task_id == emotion.pk))
    import_verdicts(path, benchmark=bench, task=emotion, judge="api-judge", settings={"temperature": 0})
    Membership.objects.create(campaign=campaign, user=make_user("researcher1", researcher=True), role="viewer")
    sign_in(page, "researcher1")
    # the benchmark's report: every item, the labelled ones and the judge-only ones
    page.goto("/reports/dialogbench-demo/embed/")
    cards = page.locator("#judge_cards")
    expect(cards).to_be_visible()
    expect(cards).to_contain_text("api-judge")
    expect(cards).to_contain_text("imported (api-judge.jsonl)")
    expect(cards).to_contain_text("kappa")
    expect(cards).to_contain_text("alternative annotator test")
    expect(page.locator("#judge_savings")).to_contain_text("human majority accuracy")
    cards.scroll_into_view_if_needed()
    shot(page, "report-judge-cards", "Report", "#judge_cards")
    for key in ("judge_cards", "judge_savings"):  # the cards themselves, to read without the rest of the report
        page.locator(f"#{key}").screenshot(path=str(SHOTS / f"report-{key.replace('_', '-')}-table.png"))
