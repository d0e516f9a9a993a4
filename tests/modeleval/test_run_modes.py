"""The run form offers the modes a benchmark's tasks support, by the rule start_run applies."""
import pytest
from rest_framework.test import APIClient

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, selectors
from modeleval.models import ModelSpec
from tests.conftest import DEMO_DATA

from .conftest import client_for


@pytest.fixture
def diqad(db):
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq-demo")
    return Benchmark.objects.get(slug="dq-demo")


def offered(client, slug):
    response = client.get(f"/api/v1/runs/modes/?benchmark={slug}")
    assert response.status_code == 200, response.content
    return {m["mode"]: m for m in response.json()}


def test_dialogbench_offers_the_multiple_choice_modes_and_says_why_not_the_others(researcher, demo_benchmark):
    modes = offered(client_for(researcher), "db-demo")
    assert {m for m, row in modes.items() if row["available"]} == {"loglikelihood", "generate", "yes_no"}
    rating = modes["rating"]
    assert not rating["available"] and "rating mode needs a scale" in rating["reasons"][0]
    assert len(rating["reasons"]) == demo_benchmark.tasks.count()  # one reason per task
    assert "make_pairs" not in modes["pairwise"]["reasons"][0] and "BotChat" in modes["pairwise"]["reasons"][0]
    assert not modes["selfchat"]["available"] and "selfchat" in modes["selfchat"]["reasons"][0]


def test_diqad_offers_no_multiple_choice_mode(researcher, diqad):
    modes = offered(client_for(researcher), "dq-demo")
    assert not modes["loglikelihood"]["available"] and not modes["generate"]["available"]
    assert "options come from the items" in modes["loglikelihood"]["reasons"][0]


def test_the_form_and_start_run_agree(researcher, demo_benchmark, diqad):
    """Every mode the selector refuses, start_run refuses with the same words; every mode it offers starts."""
    spec = ModelSpec.objects.create(name="no-weights", source="/nonexistent.gguf", sha256="0" * 64)
    for benchmark in (demo_benchmark, diqad):
        for row in selectors.run_modes(benchmark):
            if row["mode"] == "selfchat":
                continue
            try:
                actions.start_run(model=spec, benchmark=benchmark, mode=row["mode"], limit=1, enqueue=False)
            except actions.RunError as error:
                assert not row["available"] and str(error) in row["reasons"], (benchmark, row, error)
            else:
                assert row["available"], (benchmark, row)


def test_modes_need_a_researcher_and_a_known_benchmark(researcher, annotator, demo_benchmark):
    assert APIClient().get("/api/v1/runs/modes/?benchmark=db-demo").status_code in (401, 403)
    assert client_for(annotator).get("/api/v1/runs/modes/?benchmark=db-demo").status_code == 403
    response = client_for(researcher).get("/api/v1/runs/modes/?benchmark=nope")
    assert response.status_code == 404 and "nope" in response.json()["detail"]
