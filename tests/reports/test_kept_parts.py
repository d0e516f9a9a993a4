"""A recompute takes the figures of the tasks whose labels and gold did not change from the computation before
(reports.parts) and gives the report a computation from scratch gives, whatever changed."""
import json

import pytest

from annotation.models import Annotation, GoldLabel
from benchmarks.models import Item
from modeleval.models import EvalRun, Prediction
from reports import store
from reports.parts import kept_parts
from reports.service import make_report
from tests.reports import factories
from tests.reports.test_stored import comparable, demo_benchmark


def benchmark_with_two_campaigns():
    """The demo benchmark (its humans' campaign, a frozen gold, one log-likelihood run), a second run to judge it,
    and a second campaign whose raters label the items of two of its tasks again."""
    bench, campaign = demo_benchmark("db")
    items = list(Item.objects.filter(task__benchmark=bench).select_related("task").order_by("pk"))
    tasks = list(bench.tasks.order_by("slug"))
    factories.model_run(bench, tasks, "db-m2", {i.pk: {"answer": "AB"[i.pk % 2]} for i in items}, mode="generate")
    shared = [i for i in items if i.task_id in {tasks[0].pk, tasks[1].pk}]
    second = factories.human_campaign(bench, {i.pk: [i.source_gold["answer"], "B", "C"] for i in shared},
                                      name="db-second", raters=factories.users("db-second-rater-", 3))
    return bench, campaign, second, tasks


def new_gold_version(campaign, task):
    """A new frozen gold version, chosen for the benchmark: the current one with one item's gold of `task`
    changed."""
    labels = dict(GoldLabel.objects.filter(version__benchmark=campaign.benchmark, version__number=1)
                  .values_list("item_id", "value"))
    item = Item.objects.filter(task=task).order_by("pk").first()
    labels[item.pk] = other_answer(labels[item.pk])
    factories.frozen_gold(campaign, labels)


def recomputed():
    stored = store.fetch("db")  # computed in place (REPORTS_COMPUTE_IN_REQUEST in tests)
    assert stored.state == "ready"
    return store.report_of(stored)[0]


def other_answer(value):
    return "D" if value != "D" else "C"


@pytest.mark.django_db
def test_a_recompute_keeps_the_unchanged_tasks_figures_and_equals_a_report_from_scratch():
    bench, campaign, second, tasks = benchmark_with_two_campaigns()
    assert len(tasks) >= 3
    kept_parts.clear()
    reused = kept_parts.reused
    before = recomputed()
    assert kept_parts.reused == reused  # nothing kept yet
    assert comparable(before) == comparable(make_report("db"))

    def change(label):
        value = other_answer(label.value)
        Annotation.objects.filter(pk=label.pk).update(value=value, answers={"answer": value})

    writes = {
        # one label of a task only the first campaign labels
        "label": lambda: change(Annotation.objects.filter(campaign=campaign, item__task=tasks[2]).first()),
        # the gold of one item
        # the gold of one item, in a new gold version (a frozen one never changes)
        "gold": lambda: new_gold_version(campaign, tasks[2]),
        # a label of the second campaign, on a task both campaigns label
        "label of a task in two campaigns": lambda: change(
            Annotation.objects.filter(campaign=second, item__task=tasks[0]).order_by("pk").first()),
        # the first campaign's label on that same task
        "the other campaign's label there": lambda: change(
            Annotation.objects.filter(campaign=campaign, item__task=tasks[0]).order_by("pk").first()),
    }
    report = before
    for what, write in writes.items():
        write()
        reused = kept_parts.reused
        changed = recomputed()
        assert kept_parts.reused > reused, what  # the other tasks' figures were kept
        assert comparable(changed) != comparable(report), what  # the change shows
        assert comparable(changed) == comparable(make_report("db")), what
        report = changed


@pytest.mark.django_db
def test_nothing_is_kept_without_keeping_rows(settings):
    benchmark_with_two_campaigns()
    settings.REPORTS_KEEP_ROWS = False
    kept_parts.clear()
    reused = kept_parts.reused
    recomputed()
    label = Annotation.objects.order_by("pk").first()
    Annotation.objects.filter(pk=label.pk).update(value=other_answer(label.value))
    recomputed()
    assert kept_parts.reused == reused


def stored_json(report):
    """The report as its stored JSON says it (PostgreSQL keeps an object's keys sorted), without `generated_at`."""
    return json.dumps(comparable(report), sort_keys=True)


@pytest.mark.django_db
def test_a_recompute_after_a_run_finishes_or_predictions_change_equals_a_report_from_scratch():
    bench, campaign, second, tasks = benchmark_with_two_campaigns()
    m2 = EvalRun.objects.get(benchmark=bench, model__name="db-m2")
    kept_parts.clear()
    before = recomputed()
    assert stored_json(before) == stored_json(make_report("db"))

    def change_predictions(run, task, n):
        for prediction in Prediction.objects.filter(run=run, item__task=task).order_by("pk")[:n]:
            Prediction.objects.filter(pk=prediction.pk).update(answer=other_answer(prediction.answer))

    def new_run(name, covered):
        items = Item.objects.filter(task__in=covered)
        return factories.model_run(bench, covered, name, {i.pk: {"answer": "ABCD"[i.pk % 4]} for i in items},
                                   mode="generate")

    def rerun(name):
        # The same run scored again: its predictions replaced, the run finished anew.
        run = EvalRun.objects.get(benchmark=bench, model__name=name)
        EvalRun.objects.filter(pk=run.pk).update(state="running")
        Prediction.objects.filter(run=run).update(answer="C")
        EvalRun.objects.filter(pk=run.pk).update(state="finished")

    writes = {
        # a few predictions of one model, on one task: the other tasks' figures are kept
        "predictions of one run": (lambda: change_predictions(m2, tasks[1], 3), True),
        # a run that finishes on two tasks: the other tasks' figures are kept
        "a new run": (lambda: new_run("db-m3", tasks[:2]), True),
        "the run scored again": (lambda: rerun("db-m3"), True),
        # a run that finishes on every task
        "a new run on every task": (lambda: new_run("db-m4", tasks), False),
        "a run deleted": (lambda: EvalRun.objects.filter(benchmark=bench, model__name="db-m3").delete(), False),
        "a run no longer finished": (
            lambda: EvalRun.objects.filter(benchmark=bench, model__name="db-m4").update(state="failed"), False),
    }
    report = before
    for what, (write, keeps_some) in writes.items():
        write()
        reused = kept_parts.reused
        changed = recomputed()
        if keeps_some:
            assert kept_parts.reused > reused, what  # the untouched tasks' figures were kept
        assert stored_json(changed) != stored_json(report), what  # the change shows
        assert stored_json(changed) == stored_json(make_report("db")), what
        report = changed


@pytest.mark.django_db
def test_a_judge_card_counts_and_compares_the_answers_on_its_own_tasks_items():
    # Runs that judged every task: each task's card reads the answers on that task's items (which is also what lets
    # the card be kept while another task's predictions change).
    bench, _, _, tasks = benchmark_with_two_campaigns()
    cards = make_report("db")["judge_cards"]["cards"]
    assert {card["task"] for card in cards} == {t.slug for t in tasks}
    for card in cards:
        task = next(t for t in tasks if t.slug == card["task"])
        judged = Prediction.objects.filter(run_id=card["judge_run_id"], item__task=task, variant="").exclude(answer="")
        assert card["n_judged"] == judged.count() < Prediction.objects.filter(run_id=card["judge_run_id"]).count()
