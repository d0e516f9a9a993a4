"""A judge run elsewhere: its verdicts imported as a finished run, from the command line and the action; a
malformed file writes nothing and names file, line and field; the same file again adds nothing."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.importers import ImportFailure
from benchmarks.models import Item
from modeleval.actions import start_run
from modeleval.errors import RunError
from modeleval.models import EvalRun, ModelSpec, Prediction, RunEvent
from modeleval.verdicts import import_verdicts
from tests.annotation.conftest import dialogbench, diqad  # noqa: F401 -- fixtures

EMOTION = {"db-en-ed-001": "B", "db-en-ed-002": "A", "db-en-ed-003": "A"}  # one wrong of three


def write(tmp_path, lines, name="verdicts.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def emotion_task(slug):
    return Item.objects.get(task__benchmark__slug=slug, external_id="db-en-ed-001").task


def counts():
    return EvalRun.objects.count(), Prediction.objects.count(), ModelSpec.objects.count(), RunEvent.objects.count()


def test_verdicts_become_a_finished_run_with_the_judges_name_and_settings(tmp_path, dialogbench):  # noqa: F811
    task = emotion_task(dialogbench)
    path = write(tmp_path, [{"item": i, "answer": a} for i, a in EMOTION.items()])
    done = import_verdicts(path, benchmark=dialogbench, task=task.slug, judge="gpt-4o (API)",
                           settings={"temperature": 0, "prompt": "p1"})
    run = done.run
    assert done.created and done.n_verdicts == 3
    assert run.state == "finished" and run.mode == "generate" and list(run.tasks.all()) == [task]
    assert run.model.name == "gpt-4o-api" and run.model.source == "imported:gpt-4o (API)" and run.model.is_released
    assert run.settings["judge_settings"] == {"temperature": 0, "prompt": "p1"}
    assert run.settings["imported"]["file"] == "verdicts.jsonl" and len(run.settings["imported"]["sha256"]) == 64
    got = {p.item.external_id: (p.answer, p.correct) for p in run.predictions.select_related("item")}
    assert got == {"db-en-ed-001": ("B", True), "db-en-ed-002": ("A", False), "db-en-ed-003": ("A", True)}
    assert [e.kind for e in run.events.order_by("id")] == ["created", "finished"]
    with pytest.raises(RunError, match="imported verdicts, not weights"):
        start_run(model=run.model, benchmark=run.benchmark, mode="generate", enqueue=False)


def test_importing_twice_adds_nothing(tmp_path, dialogbench):  # noqa: F811
    task = emotion_task(dialogbench)
    path = write(tmp_path, [{"item_id": i, "answer": a} for i, a in EMOTION.items()])
    first = import_verdicts(path, benchmark=dialogbench, task=task.slug, judge="j", settings={"t": 1})
    before = counts()
    again = import_verdicts(path, benchmark=dialogbench, task=task.slug, judge="j", settings={"t": 1})
    assert not again.created and again.run.pk == first.run.pk and counts() == before
    # other settings are another run of the judge
    other = import_verdicts(path, benchmark=dialogbench, task=task.slug, judge="j", settings={"t": 2})
    assert other.created and other.run.pk != first.run.pk and other.run.model_id == first.run.model_id


def test_ratings_are_read_on_the_tasks_scale(tmp_path, diqad):  # noqa: F811
    task = Item.objects.filter(task__benchmark__slug=diqad).first().task
    path = write(tmp_path, [{"item": "dq-001", "answer": 2}, {"item": "dq-002", "answer": 0.5}])
    run = import_verdicts(path, benchmark=diqad, task=task.slug, judge="rater").run
    assert run.mode == "rating"
    assert sorted(run.predictions.values_list("answer", "rating")) == [("0.5", 0.5), ("2", 2.0)]


@pytest.mark.parametrize("lines, line, field, expected", [
    (['{"item": "db-en-ed-001", "answer": "B"}', "{not json"], 2, None, "JSON"),
    ([{"item": "db-en-ed-001", "answer": "B"}, {"answer": "B"}], 2, "item", "external id"),
    ([{"item": "db-en-ed-001", "answer": "B"}, {"item": "nope", "answer": "B"}], 2, "item", "not one"),
    ([{"item": "db-en-ed-001", "answer": "B"}, {"item": "db-en-ed-001", "answer": "C"}], 2, "item", "line 1 too"),
    ([{"item": "db-en-ed-001"}], 1, "answer", "the judge's answer"),
    ([{"item": "db-en-ed-001", "answer": "B"}, {"item": "db-en-ed-002", "answer": "E"}], 2, "answer", "one of"),
    ([{"item": "db-en-ed-001", "answer": "B"}, "[1, 2]"], 2, None, "JSON object"),
])
def test_a_malformed_file_writes_nothing_and_names_file_line_and_field(tmp_path, dialogbench, lines, line, field,  # noqa: F811
                                                                      expected):
    task = emotion_task(dialogbench)
    path = write(tmp_path, lines, name="bad.jsonl")
    before = counts()
    with pytest.raises(ImportFailure) as failure:
        import_verdicts(path, benchmark=dialogbench, task=task.slug, judge="new-judge", name="bad.jsonl")
    assert failure.value.path == "bad.jsonl" and failure.value.location == f"line {line}"
    assert failure.value.field == field and expected in str(failure.value)
    assert counts() == before and not ModelSpec.objects.filter(name="new-judge").exists()


def test_a_rating_off_the_scale_is_refused(tmp_path, diqad):  # noqa: F811
    task = Item.objects.filter(task__benchmark__slug=diqad).first().task
    path = write(tmp_path, [{"item": "dq-001", "answer": 7}])
    with pytest.raises(ImportFailure, match=r"line 1: field 'answer': a rating from 0 to 2"):
        import_verdicts(path, benchmark=diqad, task=task.slug, judge="rater")


def test_a_model_of_ours_keeps_its_name(tmp_path, dialogbench):  # noqa: F811
    ModelSpec.objects.create(name="mine")
    path = write(tmp_path, [{"item": "db-en-ed-001", "answer": "B"}])
    with pytest.raises(RunError, match="not an imported judge"):
        import_verdicts(path, benchmark=dialogbench, task=emotion_task(dialogbench).slug, judge="mine")


def test_the_command_imports_and_says_so_and_refuses_with_the_place(tmp_path, dialogbench):  # noqa: F811
    task = emotion_task(dialogbench)
    path = write(tmp_path, [{"item": i, "answer": a} for i, a in EMOTION.items()])
    out = io.StringIO()
    call_command("import_verdicts", str(path), benchmark=dialogbench, task=task.slug, judge="cli-judge",
                 judge_settings='{"temperature": 0.2}', stdout=out)
    assert "3 verdicts of judge cli-judge" in out.getvalue()
    out = io.StringIO()
    call_command("import_verdicts", str(path), benchmark=dialogbench, task=task.slug, judge="cli-judge",
                 judge_settings='{"temperature": 0.2}', stdout=out)
    assert "nothing added" in out.getvalue()
    bad = write(tmp_path, [{"item": "db-en-ed-001", "answer": "Z"}], name="bad.jsonl")
    with pytest.raises(CommandError, match=r"bad.jsonl:line 1: field 'answer'"):
        call_command("import_verdicts", str(bad), benchmark=dialogbench, task=task.slug, judge="cli-judge")
    with pytest.raises(CommandError, match="--judge-settings"):
        call_command("import_verdicts", str(path), benchmark=dialogbench, task=task.slug, judge="x", judge_settings="{")


def test_the_alternative_annotator_tests_judges_imported_give_its_published_verdicts(tmp_path, db):
    """Each judge of the test's smallest labelled data set (wax) imported from JSON lines: the run holds the judge's
    published answers, and the test on them gives the published winning rate and advantage probability."""
    from benchmarks.actions import import_items
    from metrics import alt_test
    from tests.metrics.test_alt_test import PUBLISHED
    from tests.metrics.test_judge_card import alttest

    human, judges = alttest("wax")
    scoring, epsilon, published = PUBLISHED["wax"]
    items = sorted({i for answers in human.values() for i in answers})
    labels = sorted({str(v) for answers in list(human.values()) + list(judges.values()) for v in answers.values()})
    form = {"primary": "r", "questions": [{"key": "r", "type": "single_choice",
                                           "options": [{"value": v, "label": v} for v in labels]}]}
    benchmark = write(tmp_path, [{"type": "benchmark", "name": "wax"}, {"type": "task", "slug": "wax", "name": "wax",
                                                                        "form": form}]
                      + [{"type": "item", "task": "wax", "external_id": i, "dialogue": [{"speaker": "a", "text": i}]}
                         for i in items], name="wax.jsonl")
    import_items(benchmark, "jsonl", "wax")
    for judge, (winning_rate, advantage) in published.items():
        answers = {i: str(v) for i, v in judges[judge].items() if i in items and v is not None}
        path = write(tmp_path, [{"item": i, "answer": v} for i, v in answers.items()], name=f"{judge}.jsonl")
        run = import_verdicts(path, benchmark="wax", task="wax", judge=judge, settings={"source": "AltTest"}).run
        stored = dict(run.predictions.values_list("item__external_id", "answer"))
        assert stored == answers
        result = alt_test(human, stored, epsilon=epsilon, scoring=scoring)
        assert (round(result.winning_rate, 2), round(result.advantage_probability, 2)) == (winning_rate, advantage)
