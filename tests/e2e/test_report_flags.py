"""The demo human baseline's HTML report in Chromium: its small-sample flags, the rule of every model
figure, the gold it cites and why, and the "How to read this report" section are visible."""
import pytest

from annotation.models import Membership
from tests.reports import factories

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_demo_human_baseline_report_shows_its_flags(page):
    # Three raters of the demo's human baseline (k = 3): one always right, one wrong on every third item,
    # one right on even items only; a log-likelihood run that is right on half of them.
    bench, items, answers = factories.demo_three_raters()
    wrong = factories.wrong_option
    campaign = factories.human_campaign(bench, answers, name="DialogBench demo: human baseline")
    factories.model_run(bench, list(bench.tasks.all()), "demo-model", {
        i.pk: {"answer": i.source_gold["answer"] if n % 2 else wrong(i),
               "answer_per_token": i.source_gold["answer"] if n % 2 else wrong(i), "answer_norm": wrong(i),
               "options": factories.options_for({k: -1.0 if k == i.source_gold["answer"] else -2.0
                                                 for k in i.fields["options"]})}
        for n, i in enumerate(items)})
    # A campaign's report is for its managers, viewers and experts (reports.access): the researcher views it.
    Membership.objects.create(campaign=campaign, user=make_user("researcher1", researcher=True), role="viewer")
    sign_in(page, "researcher1")
    page.goto(f"/reports/dialogbench-demo/embed/?campaign={campaign.pk}")
    expect(page.locator("#how-to-read")).to_be_visible()
    flags = page.locator(".flag")
    expect(flags.first).to_be_visible()
    assert flags.count() > 10
    expect(page.locator("#gold-why")).to_contain_text("no gold is pinned")
    expect(page.locator("#how-to-read")).to_contain_text("small sample")
    expect(page.locator("#mc_models")).to_contain_text("per_token")
    expect(page.locator("#dialogbench")).to_contain_text("demo-model [per_token]")
    agreement = page.locator("#agreement_campaigns tbody tr").first
    expect(agreement.locator(".flag").first).to_be_visible()
    page.locator("#mc_models").scroll_into_view_if_needed()
    shot(page, "report-small-sample-flags", "Report", ".flag")
