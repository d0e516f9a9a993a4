"""Every number a run takes is bounded where its kind's settings are validated (self-chat, scoring, training,
arena pairs), and one person may have at most RUNS_PER_PERSON runs queued or running at once."""
import json
import threading

import pytest
from celery import current_app
from django.db import connection

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, bounds
from modeleval import selfchat_runs as selfchat
from modeleval.models import EvalRun, ModelSpec
from tests.conftest import DEMO_DATA
from tests.modeleval.conftest import client_for, researcher  # noqa: F401 (fixtures)

HUGE = 1_000_000_000


@pytest.fixture
def nothing_sent(monkeypatch):
    """No chunk or generation leaves for a queue: the runs stay queued, as with busy workers."""
    for name in (actions.SCORE_CHUNK_TASK, selfchat.SELFCHAT_TASK):
        monkeypatch.setattr(current_app.tasks[name], "apply_async", lambda *args, **kwargs: None)


@pytest.fixture
def world(db, tmp_path, nothing_sent):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"d{n}", "utterances": ["hi", "hello", "how are you", "fine"]}) + "\n"
                             for n in range(3)))
    import_items(seeds, "mutual", "mutual-mini")
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")
    return ModelSpec.objects.create(name="tiny", sha256="0" * 64)


def refused(answer, code="bad_settings"):
    return answer.status_code == 400 and answer.json()["code"] == code


@pytest.mark.django_db
@pytest.mark.parametrize("field, value", [("utterances", HUGE), ("max_new_tokens", HUGE), ("utterances", 65),
                                          ("max_new_tokens", 2049), ("limit", HUGE), ("seed", 2**40),
                                          ("seed", -1)])
def test_selfchat_numbers_are_bounded(world, researcher, field, value):  # noqa: F811
    api = client_for(researcher)
    answer = api.post("/api/v1/runs/selfchat/", {"model": "tiny", "seeds": "mutual-mini", field: value}, format="json")
    assert refused(answer), (field, answer.status_code, answer.content)
    assert field in answer.json()["detail"] and not EvalRun.objects.exists()
    # BotChat's own protocol is within the bounds: 16 utterances of up to 512 new tokens.
    botchat = api.post("/api/v1/runs/selfchat/", {"model": "tiny", "seeds": "mutual-mini", "preset": "botchat",
                                                  "utterances": 16, "max_new_tokens": 512}, format="json")
    assert botchat.status_code == 201, botchat.content


@pytest.mark.django_db
@pytest.mark.parametrize("body", [
    {"benchmark": "db-demo", "mode": "generate", "settings": {"max_new_tokens": HUGE}},
    {"benchmark": "db-demo", "mode": "generate", "settings": {"batch_size": HUGE}},
    {"benchmark": "db-demo", "mode": "generate", "seed": 2**40},
    {"benchmark": "db-demo", "mode": "loglikelihood", "limit": HUGE},
    {"benchmark": "diqad-demo", "mode": "rating", "settings": {"top_k": HUGE}},
    {"benchmark": "diqad-demo", "mode": "rating", "settings": {"fewshot": {"strategy": "random", "k": HUGE}}},
    {"benchmark": "diqad-demo", "mode": "rating", "settings": {"seeds": list(range(1000))}},
], ids=["max_new_tokens", "batch_size", "seed", "limit", "top_k", "fewshot.k", "seeds"])
def test_scoring_numbers_are_bounded(world, researcher, body):  # noqa: F811
    answer = client_for(researcher).post("/api/v1/runs/", {"model": "tiny", **body}, format="json")
    assert refused(answer), answer.content
    assert not EvalRun.objects.exists()


@pytest.mark.django_db
def test_chunk_size_and_attempts_are_bounded_whichever_door(world):
    benchmark = Benchmark.objects.get(slug="db-demo")
    for fields in ({"chunk_size": HUGE}, {"max_attempts": HUGE}, {"chunk_size": 0}):
        with pytest.raises(actions.RunError) as error:
            actions.start_run(model=world, benchmark=benchmark, enqueue=False, **fields)
        assert error.value.code == "bad_settings", fields
    with pytest.raises(actions.RunError, match="max_new_tokens"):
        selfchat.start_selfchat(model=world, seeds_benchmark="mutual-mini", max_new_tokens=HUGE, enqueue=False)


@pytest.mark.django_db
@pytest.mark.parametrize("given", [{"epochs": HUGE}, {"batch_size": HUGE}, {"steps_per_chunk": HUGE},
                                   {"learning_rate": 1e6}, {"max_length": HUGE}])
def test_training_numbers_are_bounded(world, researcher, given):  # noqa: F811
    answer = client_for(researcher).post("/api/v1/runs/train/", {"model": "tiny", "benchmark": "diqad-demo",
                                                                 "settings": given}, format="json")
    assert refused(answer), answer.content
    assert next(iter(given)) in answer.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("field, value", [("min_source_utterances", HUGE), ("seed", 2**40)])
def test_arena_numbers_are_bounded(world, researcher, field, value):  # noqa: F811
    answer = client_for(researcher).post("/api/v1/runs/pairs/", {"runs": [1, 2], field: value}, format="json")
    assert refused(answer), answer.content


def test_the_bounds_hold_every_protocol_reproduced_here():
    from modeleval.training import DEFAULTS
    from studies.botchat import recipe as botchat
    from studies.dialogbench import recipe as dialogbench
    from studies.huynh import recipe as huynh

    bounds.check(botchat.SELFCHAT_SETTINGS, bounds.SELFCHAT)
    bounds.check({**botchat.PAIRWISE_SETTINGS, "fewshot": {"k": huynh.K}}, bounds.SCORING)
    bounds.check({"max_new_tokens": dialogbench.MAX_NEW_TOKENS}, bounds.SCORING)
    bounds.check(DEFAULTS, bounds.TRAINING)
    bounds.check_seeds(list(huynh.SEEDS))


# ---------------------------------------------------------------- runs per person

@pytest.mark.django_db
def test_one_person_may_have_only_so_many_runs_queued(world, researcher, settings):  # noqa: F811
    settings.RUNS_PER_PERSON = 3
    api = client_for(researcher)
    start = {"model": "tiny", "benchmark": "db-demo", "limit": 1}
    codes = [api.post("/api/v1/runs/", start, format="json").status_code for _ in range(3)]
    assert codes == [201, 201, 201]
    for url, body in (("/api/v1/runs/", start), ("/api/v1/runs/selfchat/", {"model": "tiny", "seeds": "mutual-mini"}),
                      ("/api/v1/runs/train/", {"model": "tiny", "benchmark": "diqad-demo"})):
        over = api.post(url, body, format="json")
        assert over.status_code == 429 and over.json()["code"] == "too_many_runs", (url, over.content)
        assert int(over["Retry-After"]) > 0 and "HB_RUNS_PER_PERSON" in over.json()["detail"]
    assert EvalRun.objects.filter(created_by=researcher).count() == 3
    # Cancelling one frees a place; the command line (the operator) is not counted.
    api.post(f"/api/v1/runs/{EvalRun.objects.first().pk}/cancel/", {}, format="json")
    assert api.post("/api/v1/runs/", start, format="json").status_code == 201
    actions.start_run(model=world, benchmark=Benchmark.objects.get(slug="db-demo"), limit=1, enqueue=False)


@pytest.mark.django_db(transaction=True)
def test_runs_started_at_once_are_counted_one_by_one(world, researcher, settings):  # noqa: F811
    settings.RUNS_PER_PERSON = 2
    codes, start = [], threading.Barrier(6)

    def one():
        try:
            start.wait()
            codes.append(client_for(researcher).post("/api/v1/runs/", {"model": "tiny", "benchmark": "db-demo",
                                                                       "limit": 1}, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(codes) == [201, 201, 429, 429, 429, 429], codes
    assert EvalRun.objects.filter(created_by=researcher).count() == 2
