"""A report computation keeps the items and predictions it read and re-reads them only when the database says
they changed (reports.kept_rows): the figures stay those of a report built from scratch."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation
from benchmarks.models import Item, Task
from modeleval.models import EvalRun, Prediction
from reports import store
from reports.kept_rows import kept_rows
from reports.models import RowsVersion, RunRowsVersion
from reports.service import make_report
from tests.reports import factories
from tests.reports.test_stored import comparable, demo_benchmark

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the rows' version is counted by "
                                "PostgreSQL triggers; SQLite keeps no rows between computations")


def version(benchmark):
    return RowsVersion.objects.filter(benchmark_id=benchmark.pk).values_list("version", flat=True).first() or 0


def run_version(run):
    return RunRowsVersion.objects.filter(run_id=run.pk).values_list("version", flat=True).first() or 0


@pytest.mark.django_db
def test_every_write_to_a_benchmarks_items_or_a_runs_predictions_counts_and_a_label_does_not():
    bench, campaign = demo_benchmark("db")
    other, _ = demo_benchmark("other")
    run = EvalRun.objects.get(benchmark=bench)
    their_run = EvalRun.objects.get(benchmark=other)
    task = Task.objects.filter(benchmark=bench).first()
    item = Item.objects.filter(task__benchmark=bench).first()
    item_writes = {
        "task": lambda: Task.objects.filter(pk=task.pk).update(name="renamed"),
        "item": lambda: item.save(),
    }
    for what, write in item_writes.items():
        before, theirs, runs = version(bench), version(other), run_version(run)
        write()
        assert version(bench) > before, what
        assert version(other) == theirs, what  # another benchmark's rows are not touched
        assert run_version(run) == runs, what  # the run's predictions are kept
    run_writes = {
        "run": lambda: EvalRun.objects.filter(pk=run.pk).update(state="failed"),
        "run's tasks": lambda: run.tasks.remove(task),
        "prediction update": lambda: Prediction.objects.filter(run=run).update(answer="B"),
        "prediction delete": lambda: Prediction.objects.filter(run=run, item=item).delete(),
    }
    for what, write in run_writes.items():
        before, theirs, items = run_version(run), run_version(their_run), version(bench)
        write()
        assert run_version(run) > before, what
        assert run_version(their_run) == theirs, what  # another run's predictions are not touched
        assert version(bench) == items, what  # the items are kept
    before, runs = version(bench), run_version(run)
    Annotation.objects.filter(campaign=campaign).update(value="D")
    assert version(bench) == before and run_version(run) == runs  # labels are re-read at every computation anyway


def copies_of(queries, table):
    """The COPY statements that read rows of `table` (other tables' statements name it in subqueries)."""
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith(f'COPY (SELECT "{table}".')]


@pytest.mark.django_db
def test_a_recompute_after_a_label_changes_reads_only_the_labels_again_with_the_same_figures():
    bench, campaign = demo_benchmark("db")
    kept_rows.clear()
    reused = kept_rows.reused
    stored = store.fetch("db")  # computed in place (REPORTS_COMPUTE_IN_REQUEST in tests)
    assert stored.state == "ready" and kept_rows.reused == reused

    label = Annotation.objects.filter(campaign=campaign, value="A").first()
    Annotation.objects.filter(pk=label.pk).update(value=label.item.source_gold["answer"],
                                                  answers={"answer": label.item.source_gold["answer"]})
    with CaptureQueriesContext(connection) as queries:
        stored = store.fetch("db")
    assert kept_rows.reused == reused + 1
    assert copies_of(queries, "modeleval_prediction") == [] and copies_of(queries, "benchmarks_item") == []
    assert copies_of(queries, "annotation_annotation")  # the labels are read again
    report, _ = store.report_of(stored)
    assert comparable(report) == comparable(make_report("db"))

    # A prediction changes: the run's predictions are read again (the items kept), and the figures follow.
    Prediction.objects.filter(run__benchmark=bench).update(answer="B")
    with CaptureQueriesContext(connection) as queries:
        stored = store.fetch("db")
    assert kept_rows.reused == reused + 2 and copies_of(queries, "benchmarks_item") == []
    assert copies_of(queries, "modeleval_prediction")
    changed, _ = store.report_of(stored)
    assert changed["multiple_choice"] != report["multiple_choice"]
    assert comparable(changed) == comparable(make_report("db"))


@pytest.mark.django_db
def test_a_recompute_after_one_runs_predictions_change_reads_only_that_runs_predictions_again():
    bench, _ = demo_benchmark("db")
    items = Item.objects.filter(task__benchmark=bench)
    second = factories.model_run(bench, list(bench.tasks.all()), "db-m2",
                                 {i.pk: {"answer": "AB"[i.pk % 2]} for i in items}, mode="generate")
    kept_rows.clear()
    store.fetch("db")
    runs_read = kept_rows.runs_read
    prediction = Prediction.objects.filter(run=second).order_by("pk").first()
    Prediction.objects.filter(pk=prediction.pk).update(answer="C" if prediction.answer != "C" else "D")
    with CaptureQueriesContext(connection) as queries:
        stored = store.fetch("db")
    assert kept_rows.runs_read == runs_read + 1  # the first run's predictions are kept
    [copy] = copies_of(queries, "modeleval_prediction")
    assert copy.endswith("\"modeleval_prediction\".\"run_id\" IN (%s))) TO STDOUT")  # one run
    report, _ = store.report_of(stored)
    assert comparable(report) == comparable(make_report("db"))

    # A run that finishes: its predictions are read, the others' kept.
    factories.model_run(bench, list(bench.tasks.all()), "db-m3",
                                {i.pk: {"answer": "CD"[i.pk % 2]} for i in items}, mode="generate")
    with CaptureQueriesContext(connection) as queries:
        stored = store.fetch("db")
    assert kept_rows.runs_read == runs_read + 2
    [copy] = copies_of(queries, "modeleval_prediction")
    assert copy.endswith("\"modeleval_prediction\".\"run_id\" IN (%s))) TO STDOUT")
    report, _ = store.report_of(stored)
    assert comparable(report) == comparable(make_report("db"))


@pytest.mark.django_db
def test_a_campaigns_report_reads_every_row_each_time(settings):
    bench, campaign = demo_benchmark("db")
    kept_rows.clear()
    reused = kept_rows.reused
    store.fetch("db", campaign=campaign.pk)
    Annotation.objects.filter(campaign=campaign, value="A").update(value="D")
    store.fetch("db", campaign=campaign.pk)
    assert kept_rows.reused == reused  # its items come through its batches, which change as people label
    settings.REPORTS_KEEP_ROWS = False
    store.fetch("db")
    Annotation.objects.filter(campaign=campaign, value="D").update(value="A")
    store.fetch("db")
    assert kept_rows.reused == reused
