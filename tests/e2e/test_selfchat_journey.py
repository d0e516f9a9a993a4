"""A researcher's BotChat journey in a real browser, on the packaged model: a self-chat run started from the runs
page, queued, generated (this test plays the gpu worker) and finished, then arena pairs built from it against the
real dialogues, a refusal shown first, and the links onward."""
import shutil
from pathlib import Path

import pytest

from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval import selfchat_runs as selfchat
from modeleval.actions import register_packaged_model
from modeleval.models import EvalRun
from modeleval.selfchat_runs import start as selfchat_start
from tests.modeleval.conftest import require_model

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
REVIEW_SHOTS = Path("/tmp/shots")


def keep(paths):
    """A copy of the screenshots where they are looked at after the run."""
    REVIEW_SHOTS.mkdir(exist_ok=True)
    for path in paths:
        shutil.copy(path, REVIEW_SHOTS / path.name)


def test_a_researcher_starts_a_selfchat_run_sees_it_finish_and_builds_pairs(page, mutual_path, monkeypatch):
    require_model()
    import torch

    torch.set_num_threads(1)
    import_items(mutual_path, "mutual", "mutual")
    model = register_packaged_model()
    make_user("researcher", researcher=True)
    queued = []
    monkeypatch.setattr(selfchat_start, "enqueue_selfchat", queued.append)  # the worker is this test

    sign_in(page, "researcher")
    page.goto("/runs/")
    page.select_option("#sc-model", model.name)
    page.select_option("#sc-seeds", "mutual")
    page.fill("#sc-limit", "2")
    page.fill("#sc-utterances", "4")
    page.fill("#sc-max-new-tokens", "8")
    expect(page.locator("#pair-runs")).to_contain_text("None yet")
    page.locator("#sc-max-new-tokens").blur()  # a number field focused through a resize swallowed the next click
    keep(shot(page, "selfchat-form", "Model runs", "#start-selfchat"))
    page.click("#start-selfchat-button")
    expect(page.locator("#selfchat-notice")).to_contain_text("queued: 2 seeds continued to 4 utterances")
    run = EvalRun.objects.get()
    assert queued == [run.pk] and run.selection == {"seeds_benchmark": "mutual", "limit": 2}
    row = page.locator(f"#runs tr[data-run='{run.pk}']")
    expect(row).to_have_attribute("data-state", "queued")
    expect(row.locator(".scored")).to_have_text("waiting for a worker · 2 seeds")
    keep(shot(page, "selfchat-queued", "Model runs", f"#runs tr[data-run='{run.pk}']"))

    assert selfchat.generate(run.pk, worker="test@e2e") == "done"
    expect(row).to_have_attribute("data-state", "finished")
    expect(row.locator(".scored")).to_have_text("2 dialogues written")
    expect(row.locator("progress")).to_have_attribute("value", "2")
    box = page.locator(f"#pair-runs input[value='{run.pk}']")
    expect(box).to_be_visible()
    keep(shot(page, "selfchat-finished", "Model runs", f"#pair-runs input[value='{run.pk}']"))

    # One run alone makes no pair: the refusal is shown by the form, and nothing is written.
    benchmarks = Benchmark.objects.count()
    box.check()
    page.click("#make-pairs-button")
    expect(page.locator("#pairs-result")).to_contain_text("pairs need two systems")
    expect(page.locator("#pairs-result")).to_contain_text("[bad_settings]")
    assert Benchmark.objects.count() == benchmarks
    keep(shot(page, "pairs-refused", "Model runs", "#pairs-result"))

    page.select_option("#pairs-ground-truth", "mutual")
    page.select_option("#pairs-reference", "human")
    expect(page.locator("#pairs-min-source")).to_have_value("4")  # BotChat's arena seeds
    page.fill("#pairs-slug", "arena-journey")
    page.click("#make-pairs-button")
    result = page.locator("#pairs-result")
    expect(result).to_contain_text("Benchmark arena-journey built: 4 pairs")
    arena = Benchmark.objects.get(slug="arena-journey")
    items = Item.objects.filter(task__benchmark=arena)
    assert items.count() == 4 and {item.meta["model_b"] for item in items} | {item.meta["model_a"] for item in items} \
        == {model.name, "human"}
    expect(result.locator("#pairs-report")).to_have_attribute("href", "/reports/arena-journey/")
    expect(result).to_contain_text("A manager can create a campaign on it")  # a researcher creates none
    keep(shot(page, "pairs-built", "Model runs", "#pairs-result #pairs-judge"))

    page.click("#pairs-judge")
    expect(page.locator("#benchmark")).to_have_value("arena-journey")
    expect(page.locator("#mode")).to_have_value("pairwise")
    keep(shot(page, "pairs-judge-run", "Model runs", "#start-run"))
