"""The runs page offers each study of a mode by name: DiQAD's preset for a rating run, its differences listed on
the run."""
import pytest

from benchmarks.actions import import_items
from modeleval import actions as model_actions
from modeleval.models import EvalRun, ModelSpec
from tests.conftest import DEMO_DATA

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_diqad_run_is_started_from_the_runs_page(page, monkeypatch):
    monkeypatch.setattr(model_actions, "enqueue_chunks", lambda run_id: None)  # nothing is scored here
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq-demo")
    ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)
    make_user("researcher", researcher=True)
    sign_in(page, "researcher")
    page.goto("/runs/")
    page.select_option("#benchmark", "dq-demo")
    page.select_option("#mode", "rating")
    expect(page.locator("#preset option[value='diqad']")).to_have_text("DiQAD (Zhao et al., 2023)")
    page.select_option("#preset", "diqad")
    page.fill("#limit", "2")
    page.click("#start")
    expect(page.locator("#notice")).to_contain_text("started")
    run = EvalRun.objects.get()
    assert run.settings["preset"] == "diqad" and run.prompt_version == "diqad-appendix-c-zh/1"
    assert run.settings["read"] == "generation"
    cell = page.locator(f"#runs tr[data-run='{run.pk}'] .study")
    expect(cell.locator("summary")).to_have_text("DiQAD (Zhao et al., 2023): 6 differences")
    cell.locator("summary").click()
    expect(cell.locator("li").first).to_contain_text("test set: published a random 10,000-dialogue test split")
    expect(cell).to_contain_text("appendix C")
    shot(page, "runs-diqad-study", "Model runs", "#runs .study details[open]")
