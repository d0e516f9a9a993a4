"""The report page in Chromium when a model lacks predictions and another ran on fewer tasks: the gap is on the
items both answered and says how many are missing, the leading overall interval comes first and says why, a
McNemar p without discordant items carries its note, and an Avg over fewer tasks than the people's is left out."""
import re

import pytest

from annotation.models import Membership
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval.models import Prediction
from tests.conftest import DEMO_DATA
from tests.reports import factories

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_report_page_compares_on_the_items_both_answered(page):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "dialogbench-demo")
    bench = Benchmark.objects.get(slug="dialogbench-demo")
    items = list(Item.objects.filter(task__benchmark=bench).select_related("task").order_by("id"))

    def wrong(item):
        return next(k for k in item.fields["options"] if k != item.source_gold["answer"])

    answers = {i.pk: [i.source_gold["answer"], wrong(i) if n % 3 == 0 else i.source_gold["answer"],
                      i.source_gold["answer"] if n % 2 == 0 else wrong(i)] for n, i in enumerate(items)}
    campaign = factories.human_campaign(bench, answers, name="DialogBench demo: human baseline")

    def prediction(n, item):
        pick = item.source_gold["answer"] if n % 2 else wrong(item)
        return {"answer": pick, "answer_per_token": pick, "answer_norm": wrong(item),
                "options": factories.options_for({k: -1.0 if k == item.source_gold["answer"] else -2.0
                                                  for k in item.fields["options"]})}

    run = factories.model_run(bench, list(bench.tasks.all()), "demo-model",
                              {i.pk: prediction(n, i) for n, i in enumerate(items)})
    # Two of its predictions are lost: both items of one task.
    lost = [i for i in items if i.task.slug == "dialogue_nli"]
    Prediction.objects.filter(run=run, item__in=lost).delete()
    # Another model ran on every task but that one.
    others = [t for t in bench.tasks.all() if t.slug != "dialogue_nli"]
    factories.model_run(bench, others, "partial-model",
                        {i.pk: prediction(n + 1, i) for n, i in enumerate(items) if i.task.slug != "dialogue_nli"})
    Membership.objects.create(campaign=campaign, user=make_user("researcher1", researcher=True), role="viewer")
    sign_in(page, "researcher1")
    page.goto(f"/reports/dialogbench-demo/embed/?campaign={campaign.pk}")
    expect(page.locator("#how-to-read")).to_contain_text("interval leads")
    # The accuracy-per-task table: the partial model's Avg is left out, with the reason on hover.
    avg = page.locator("#dialogbench tbody tr", has_text="partial-model").locator("td").last
    expect(avg).to_have_text("--")
    expect(avg).to_have_attribute("title", "run on 4 of the 5 tasks: its mean is not comparable with the Avg of the "
                                           "people")
    # The models table: the task without predictions has no figure, and the missing count shows.
    lost_row = page.locator("#mc_models tbody tr", has_text="dialogue_nli").filter(has_text="demo-model")
    expect(lost_row.locator("td").nth(4)).to_have_text("--")
    expect(lost_row.locator("td").last).to_have_text(re.compile(r"^2"))  # then its small-sample flag
    # The leading overall row comes first, and the note says why.
    overall = page.locator("#mc_models tbody tr", has_text="all tasks").filter(has_text="demo-model")
    expect(overall.first).to_contain_text("pooled items (item-level; leads)")
    expect(overall.nth(1)).to_contain_text("mean of tasks (within-task)")
    expect(page.locator("#mc_models + p.note")).to_contain_text("no prediction on 2 of the 12 items")
    notes = page.locator("#mc_models .note-mark")
    expect(notes.first).to_be_visible()
    page.locator("#mc_models").scroll_into_view_if_needed()
    shot(page, "report-gap-items-both-answered", "Report", "#mc_models")
