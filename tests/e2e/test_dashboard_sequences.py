"""The campaign dashboard in Chromium while labels arrive: the human-versus-model gap as a confidence sequence
beside the fixed-n interval, drawn against the labels, with its verdict under the researcher's margin."""
import json
import re

import numpy as np
import pytest

from annotation.models import Membership
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from frontend.models import Preferences
from tests.reports import factories

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rated_benchmark(path, n_items=300, n_labelled=100, seed=5):
    """DiQAD-shaped items scored 0-2 by two people on the first `n_labelled`; a judge run near the people, a model
    run half a point below them ("low-model") and one level with them ("level-model") on every item."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_items)
    path.write_text("\n".join(json.dumps({
        "id": f"dq-{n:03d}", "domain": "legal", "label": int(truth[n]), "reasons": [], "needs_verification": 0,
        "dialogue": [{"speaker": "user", "text": f"Question {n}?"}, {"speaker": "expert", "text": f"Answer {n}."}]})
        for n in range(n_items)), encoding="utf-8")
    import_items(path, "diqad", "dq-live")
    bench = Benchmark.objects.get(slug="dq-live")
    items = sorted(Item.objects.filter(task__benchmark=bench), key=lambda i: i.external_id)
    answers = {i.pk: ([int(np.clip(truth[n] + rng.integers(-1, 2) * (rng.random() < 0.3), 0, 2)) for _ in range(2)]
                      if n < n_labelled else [None, None]) for n, i in enumerate(items)}
    campaign = factories.human_campaign(bench, answers, name="DiQAD: live")
    tasks = list(bench.tasks.all())
    for name, shift, noise in (("judge-model", 0.0, 0.3), ("low-model", -0.5, 0.2), ("level-model", 0.0, 0.2)):
        scores = {i.pk: float(np.clip(truth[n] + shift + rng.normal(0, noise), 0, 2)) for n, i in enumerate(items)}
        factories.model_run(bench, tasks, name, {k: {"answer": f"{v:.2f}", "rating": v, "parse_status": "parsed"}
                                                 for k, v in scores.items()}, mode="rating",
                            settings={"quality": "score"})
    return campaign


def row(page, model):
    """The dashboard's row of `model` against the people, with judge-model standing in for them."""
    name = page.locator("td:nth-child(2)", has_text=re.compile(rf"^{model}.*judge-model"))
    return page.locator("#sequences tr").filter(has=name)


def test_dashboard_shows_the_gap_as_a_confidence_sequence_with_its_verdict(page, tmp_path):
    campaign = rated_benchmark(tmp_path / "dq.jsonl")
    Membership.objects.create(campaign=campaign, user=make_user("researcher1", researcher=True), role="viewer")
    sign_in(page, "researcher1")
    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    low = row(page, "low-model")
    expect(low.locator(".verdict")).to_contain_text("Separated")
    expect(low).to_contain_text("100 of 300")
    expect(page.locator("#sequence-card")).to_contain_text("valid only at a number of labels set in advance")
    expect(page.locator("#sequence-plots svg").first).to_be_visible()
    level = row(page, "level-model")
    expect(level.locator(".verdict")).to_contain_text("Continue")
    shot(page, "dashboard-sequences", "Dashboard", "#sequence-card")
    # The researcher's margin: a little wider, the level model may look equivalent after more labels ...
    page.fill("#margin", "0.1")
    page.dispatch_event("#margin", "change")
    expect(level.locator(".verdict")).to_contain_text(re.compile(r"Continue: about \d+ more labels \(new items\) "
                                                                 r"until it may look equivalent"))
    shot(page, "dashboard-sequences-continue", "Dashboard", "#sequence-card")
    # ... and wide enough, it is equivalent to the people now.
    page.fill("#margin", "0.5")
    page.dispatch_event("#margin", "change")
    expect(level.locator(".verdict")).to_contain_text("Equivalent within ±0.5")
    shot(page, "dashboard-sequences-margin", "Dashboard", "#sequence-card")


@pytest.mark.parametrize(("language", "heading", "separated"), [("ko", "사람 빼기 모델", "분리됨"),
                                                                ("zh-hans", "人类减模型", "已分开")])
def test_the_card_in_korean_and_chinese(page, tmp_path, language, heading, separated):
    campaign = rated_benchmark(tmp_path / "dq.jsonl")
    researcher = make_user("researcher1", researcher=True)
    Preferences.objects.create(user=researcher, language=language)
    Membership.objects.create(campaign=campaign, user=researcher, role="viewer")
    sign_in(page, "researcher1")
    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    expect(page.locator("#sequence-title")).to_contain_text(heading)
    expect(row(page, "low-model").locator(".verdict")).to_contain_text(separated)
    shot(page, f"dashboard-sequences-{language}", "Dashboard", "#sequence-card")
