"""The researcher's pages in a real browser: the run form, progress per chunk, a cancelled run, the report."""
import pytest

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions as model_actions
from modeleval import runner
from modeleval.models import EvalRun, ModelSpec
from tests.conftest import DEMO_DATA
from tests.modeleval.test_runs import fake_rows

from .conftest import expect, make_user, shot, sign_in
from .test_flows import campaign_for, label_all, people  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def researcher():
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq-demo")
    ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)
    return make_user("researcher", researcher=True)


def offered_modes(page):
    return page.locator("#mode option").evaluate_all("options => options.map(o => o.value)")


def test_run_form_offers_only_the_modes_the_tasks_support(page, researcher):
    sign_in(page, "researcher")
    page.goto("/runs/")
    page.select_option("#benchmark", "db-demo")
    expect(page.locator("#modes-missing li[data-mode='rating']")).to_contain_text("needs a scale")
    assert offered_modes(page) == ["loglikelihood", "generate", "yes_no"]
    page.select_option("#benchmark", "dq-demo")
    expect(page.locator("#modes-missing li[data-mode='loglikelihood']")).to_contain_text("options come from the items")
    assert offered_modes(page) == ["rating", "yes_no"]  # DiQAD's quality is a numeric choice: rated
    expect(page.locator("#modes-missing li[data-mode='pairwise']")).to_contain_text("BotChat")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"runs-modes-{width}", "Model runs", "#modes-missing li")


def test_a_run_follows_a_study_picked_by_name_and_lists_where_it_differs(page, researcher, monkeypatch):
    monkeypatch.setattr(model_actions, "enqueue_chunks", lambda run_id: None)  # nothing is scored here
    sign_in(page, "researcher")
    page.goto("/runs/")
    page.select_option("#benchmark", "db-demo")
    page.select_option("#mode", "generate")
    expect(page.locator("#preset option[value='dialogbench']")).to_have_text("DialogBench (Ou et al., 2024)")
    page.select_option("#preset", "dialogbench")
    page.fill("#limit", "1")
    page.click("#start")
    expect(page.locator("#notice")).to_contain_text("started")
    run = EvalRun.objects.get()
    assert run.settings["preset"] == "dialogbench" and run.prompt_version == "dialogbench-sft-en/1"
    cell = page.locator(f"#runs tr[data-run='{run.pk}'] .study")
    expect(cell.locator("summary")).to_have_text("DialogBench (Ou et al., 2024): 3 differences")
    cell.locator("summary").click()
    expect(cell.locator("li")).to_have_count(3)
    # The packaged model has no evaluator of its own in src/evaluate.py: prompt_SFT as it is, no chat history asked.
    assert run.settings["evaluator"] == "default"
    expect(cell.locator("li").nth(2)).to_contain_text("reply limit: published 128 new tokens in the released code")
    expect(cell).to_contain_text("kwai/DialogBench commit 239a5cc")
    page.select_option("#mode", "loglikelihood")  # the choice follows the mode's studies
    expect(page.locator("#preset")).to_have_value("dialogbench")
    page.select_option("#mode", "yes_no")
    expect(page.locator("#preset option")).to_have_count(3)  # none, Huynh et al.'s and DiQAD's
    expect(page.locator("#preset")).to_have_value("")
    shot(page, "runs-study", "Model runs", "#runs .study details[open]")


def test_progress_moves_per_chunk_and_a_cancelled_run_shows_what_it_scored(page, researcher, monkeypatch):
    monkeypatch.setattr(model_actions, "enqueue_chunks", lambda run_id: None)  # this test plays the worker
    sign_in(page, "researcher")
    page.goto("/runs/")
    page.select_option("#benchmark", "db-demo")
    expect(page.locator("#mode option").first).to_have_attribute("value", "loglikelihood")
    page.fill("#limit", "1")
    page.fill("#chunk-size", "1")
    page.click("#start")
    expect(page.locator("#notice")).to_contain_text("5 chunks")
    run = EvalRun.objects.get()
    assert run.chunks_total == 5
    row = page.locator(f"#runs tr[data-run='{run.pk}']")
    expect(row.locator(".scored")).to_have_text("0 / 5 items scored · chunk 0 of 5")

    chunks = list(run.chunks.order_by("index"))
    for chunk in chunks[:2]:
        runner.claim_chunk(chunk.pk, "test")
        runner.complete_chunk(chunk.pk, fake_rows(run, chunk))
        done = chunks.index(chunk) + 1
        expect(row.locator(".scored")).to_have_text(f"{done} / 5 items scored · chunk {done} of 5")
        expect(row.locator("progress")).to_have_attribute("value", str(done))
    shot(page, "runs-progress", "Model runs", "#runs tr progress")

    runner.claim_chunk(chunks[2].pk, "test")  # a chunk being scored when the run is cancelled
    row.locator("button", has_text="Cancel").click()
    expect(row).to_have_attribute("data-state", "cancelled")
    expect(row.locator(".scored")).to_contain_text("2 of 5 items scored before it stopped")
    runner.complete_chunk(chunks[2].pk, fake_rows(run, chunks[2]))  # it finishes and keeps its predictions
    expect(row.locator(".scored")).to_have_text("3 of 5 items scored before it stopped (3 of 5 chunks)")
    expect(row.locator(".state")).to_contain_text("cancelled")
    assert run.predictions.count() == 3
    shot(page, "runs-cancelled", "Model runs", "#runs tr[data-state='cancelled']")


def test_dashboard_downloads_the_raw_annotations(page, people):
    campaign = campaign_for(people)
    label_all(campaign, people["ann1"])
    sign_in(page, "viewer")
    page.goto(f"/campaigns/{campaign.pk}/dashboard/")
    with page.expect_download() as info:
        page.click("#export-csv")
    rows = info.value.path().read_text(encoding="utf-8").splitlines()
    assert info.value.suggested_filename == f"annotations-campaign-{campaign.pk}.csv"
    assert rows[0].startswith("annotation_id,campaign,task,item_external_id") and len(rows) == 1 + 4
    with page.expect_download() as info:
        page.click("#export-jsonl")
    assert len(info.value.path().read_text(encoding="utf-8").splitlines()) == 4
    page.wait_for_selector("#batches tr")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, f"dashboard-export-{width}", "Dashboard", "#export-csv")


def report_fits(page):
    """(height the frame shows, height of the report inside it, page height, viewport height)."""
    return page.evaluate("""() => {
        const inner = document.getElementById('report-frame').contentDocument;
        const body = inner.body.getBoundingClientRect().height;
        return [inner.documentElement.clientHeight, inner.documentElement.scrollHeight,
                document.documentElement.scrollHeight, innerHeight, body];
    }""")


def test_report_page_uses_the_pages_scroll(page, researcher):
    sign_in(page, "researcher")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/reports/db-demo/")
        page.frame_locator("#report-frame").locator("table").first.wait_for()
        expect(page.locator("#report-frame")).to_have_attribute("data-fitted", "1")
        frame_height, report_height, page_height, viewport, body = report_fits(page)
        assert body > viewport  # a long report ...
        assert report_height <= frame_height + 1 and frame_height - body < 100  # ... shown whole, no scroll box
        assert page_height > report_height  # the page scrolls instead
        shot(page, f"report-{width}", "Report", "#report-frame")
    page.set_viewport_size({"width": 1366, "height": 900})  # wider: the report gets shorter, and so does the frame
    expect(page.locator("#report-frame")).to_have_attribute("data-width", "1366")
    frame_height, report_height, _, _, body = report_fits(page)
    assert report_height <= frame_height + 1 and frame_height - body < 100


def test_a_classifier_is_trained_from_the_runs_page_with_the_recipe_as_settings(page, researcher, monkeypatch,
                                                                                tmp_path):
    from tests.modeleval.test_training import accept_labels, write_items

    monkeypatch.setattr(model_actions, "enqueue_chunks", lambda run_id: None)  # no worker: the form is the subject
    write_items(tmp_path / "train.jsonl")
    import_items(tmp_path / "train.jsonl", "diqad", "dq-train")
    accept_labels(Benchmark.objects.get(slug="dq-train"))
    sign_in(page, "researcher")
    page.goto("/runs/")
    expect(page.locator("#train-learning-rate")).to_have_value("0.00001")  # DiQAD's recipe
    expect(page.locator("#train-batch-size")).to_have_value("16")
    expect(page.locator("#train-epochs")).to_have_value("10")
    page.select_option("#train-base", "no-weights")
    page.select_option("#train-benchmark", "dq-train")
    page.fill("#train-epochs", "2")
    page.fill("#train-test", "40")
    page.fill("#train-validation", "24")
    page.fill("#train-max-length", "64")
    page.fill("#train-seed", "4")
    page.click("#train")
    expect(page.locator("#notice")).to_contain_text("Training run")
    run = EvalRun.objects.get(mode="train")
    assert run.seed == 4 and run.settings["epochs"] == 2 and run.settings["learning_rate"] == 1e-5
    assert run.settings["max_length"] == 64 and run.settings["include_checked"] is False
    assert len(run.selection["split"]["test"]) == 40 and len(run.selection["split"]["validation"]) == 24
    row = page.locator(f"#runs tr[data-run='{run.pk}']")
    expect(row.locator(".scored")).to_have_text(f"0 / {run.items_total} examples trained · chunk 0 of "
                                                f"{run.chunks_total}")
    shot(page, "runs-training", "Model runs", "#start-training")

    page.fill("#train-holdout", "nowhere")
    page.click("#train")
    expect(page.locator("#notice")).to_contain_text("no labelled item has domain 'nowhere'")
    assert EvalRun.objects.filter(mode="train").count() == 1
