"""Runs scored in this process with the real packaged model (a few items each)."""
import io
import math

import pytest
from django.conf import settings
from django.core.management import call_command

from benchmarks.actions import import_items
from benchmarks.models import Benchmark
from modeleval import actions, runner, selectors
from modeleval.models import EvalRun, ParseStatus, Prediction, RunState

pytestmark = [pytest.mark.model, pytest.mark.slow]


def sync_run(spec, benchmark, **kwargs):
    run = actions.start_run(model=spec, benchmark=benchmark, enqueue=False, **kwargs)
    run = runner.run_sync(run)
    assert run.state == RunState.FINISHED, run.reason
    return run


def test_score_command_sync_on_demo_items(packaged, demo_benchmark):
    out = io.StringIO()
    call_command("score", "--model", packaged.name, "--benchmark", "db-demo", "--limit", "1", "--chunk-size", "2",
                 "--sync", stdout=out)
    run = EvalRun.objects.get()
    assert run.state == RunState.FINISHED and (run.items_done, run.chunks_done) == (5, 3)
    assert f"run {run.pk} finished" in out.getvalue() and "overall accuracy" in out.getvalue()
    rows = list(Prediction.objects.filter(run=run).select_related("item"))
    assert len(rows) == 5 and {p.parse_status for p in rows} == {ParseStatus.SCORED}

    # Anyone can recompute the score from the rows: the three rules from the stored numbers...
    for p in rows:
        picks = selectors.mc_picks(p.options)
        assert picks["per_token"] == p.answer == p.answer_per_token  # the run's rule is per_token
        assert picks["acc_norm"] == p.answer_norm
        assert p.correct == (p.answer == p.gold == p.item.source_gold["answer"])
        assert [o["source_key"] for o in p.options] == list(p.item.fields["options"])
        assert all(o["continuation"] == " " + o["text"] and o["n_chars"] == len(o["text"]) for o in p.options)
    summary = selectors.run_summary(run)
    accuracy = sum(p.correct for p in rows) / len(rows)  # one item per task: the mean of tasks is the mean
    assert summary["overall_accuracy"] == pytest.approx(accuracy)

    # ...and the numbers themselves from the stored strings, by lm-eval's reference path.
    from modeleval.scorers.loading import get_model
    from modeleval.scorers.loglikelihood import MCItem, score_one_by_one

    model, tokenizer, _ = get_model(cache_dir=settings.MODEL_CACHE_DIR)
    p = rows[0]
    request = MCItem(p.options[0]["context"], tuple(o["text"] for o in p.options))
    again = score_one_by_one(model, tokenizer, [request])[0]
    for stored, fresh in zip(p.options, again.options, strict=True):
        assert fresh.continuation == stored["continuation"] and fresh.n_tokens == stored["n_tokens"]
        assert fresh.logprob == pytest.approx(stored["logprob"], abs=1e-4)


def test_generate_mode_reads_option_letters(packaged, demo_benchmark):
    run = sync_run(packaged, demo_benchmark, mode="generate", tasks=["offensive_detection"], chunk_size=2,
                   settings={"max_new_tokens": 8})
    for p in Prediction.objects.filter(run=run):
        assert p.prompt.startswith("<|im_start|>") and "A. " in p.prompt and p.raw_output
        if p.parse_status == ParseStatus.PARSED:
            assert p.answer in "AB" and p.correct == (p.answer == p.gold)
        else:  # unparsable counts as wrong
            assert p.answer == "" and p.correct is False
    print({p.item.external_id: p.raw_output for p in Prediction.objects.filter(run=run)})


def test_gold_at_each_position(packaged, demo_benchmark):
    run = sync_run(packaged, demo_benchmark, tasks=["emotion_detection"], limit=1,
                   position_policy="gold_at_each_position", settings={"continuation": "letter"})
    rows = {p.variant: p for p in Prediction.objects.filter(run=run)}
    assert sorted(rows) == ["A", "B", "C", "D"]
    item = rows["A"].item
    gold_text = item.fields["options"][item.source_gold["answer"]]
    for position, p in rows.items():
        shown = {o["key"]: o["text"] for o in p.options}
        assert p.gold == position and shown[position] == gold_text
        assert sorted(shown.values()) == sorted(item.fields["options"].values())
        assert [o["continuation"] for o in p.options] == [" A", " B", " C", " D"]
        assert "A. " in p.options[0]["context"]  # the letter prompt lists the options
    by_position = selectors.run_summary(run)["tasks"]["emotion_detection"]["by_position"]
    assert sorted(by_position) == ["A", "B", "C", "D"] and all(v["total"] == 1 for v in by_position.values())


@pytest.fixture
def fed(db, fed_path):
    import_items(fed_path, "fed", "fed")
    return Benchmark.objects.get(slug="fed")


def test_rating_mode_on_fed(packaged, fed):
    run = sync_run(packaged, fed, mode="rating", limit=2, chunk_size=4)
    rows = list(Prediction.objects.filter(run=run).select_related("item__task"))
    assert len(rows) == 4 and {p.item.task.slug for p in rows} == {"fed-turn", "fed-dialog"}
    for p in rows:
        top = {int(r): q for r, q in p.probabilities["top"].items()}
        assert len(top) == 3 and math.isclose(sum(top.values()), 1.0, rel_tol=1e-6)
        assert p.rating == pytest.approx(sum(r * q for r, q in top.items()))
        assert 0 <= p.rating <= 4 and set(p.probabilities["raw"]) == {"0", "1", "2", "3", "4"}
        assert p.prompt.startswith("Rate the overall quality of the response") and p.prompt.endswith("Overall score:")
        assert p.fewshot_ids == [] and p.parse_status == ParseStatus.SCORED
    turn = next(p for p in rows if p.item.task.slug == "fed-turn")
    assert f"Response: {turn.item.fields['response']['speaker']}: " in turn.prompt


def test_yes_no_mode_on_fed(packaged, fed):
    run = sync_run(packaged, fed, mode="yes_no", tasks=["fed-turn"], limit=1, settings={"quality": "engaging"})
    p = Prediction.objects.get(run=run)
    g = p.probabilities["yes"] / (p.probabilities["yes"] + p.probabilities["no"])
    assert p.rating == pytest.approx(g) and p.answer == ("yes" if g >= 0.5 else "no")
    assert p.prompt.endswith("Is the response Engaging?")


def test_rating_with_random_few_shot_examples(packaged):
    from benchmarks.models import Item, Task

    bench = Benchmark.objects.create(slug="rated", name="Rated")
    form = {"primary": "overall", "questions": [{"key": "overall", "type": "scale", "label": "Overall",
                                                 "scale": {"min": 1, "max": 5}}]}
    task = Task.objects.create(benchmark=bench, slug="turns", name="Turns", form=form)
    for n in range(5):
        Item.objects.create(task=task, external_id=f"r{n}", source_gold={"overall": n + 1},
                            dialogue=[{"speaker": "User", "text": f"Tell me about {n} cats."}],
                            fields={"response": {"speaker": "System", "text": f"There are {n} cats here."}})
    query = Item.objects.get(external_id="r0")
    settings_ = {"fewshot": {"strategy": "random", "k": 2}}
    runs = [sync_run(packaged, bench, mode="rating", item_ids=[query.pk], settings=settings_, seed=seed)
            for seed in (1, 1)]
    p, again = (Prediction.objects.get(run=run) for run in runs)
    assert len(p.fewshot_ids) == 2 and "r0" not in p.fewshot_ids
    assert p.fewshot_ids == again.fewshot_ids and p.prompt == again.prompt  # seeded: the same examples
    for shown in p.fewshot_ids:
        gold = Item.objects.get(external_id=shown).source_gold["overall"]
        assert f"Overall score: {gold}" in p.prompt
    assert p.prompt.endswith("There are 0 cats here.\nOverall score:") and p.gold == "1"
    assert set(p.probabilities["raw"]) == {"1", "2", "3", "4", "5"} and 1 <= p.rating <= 5
