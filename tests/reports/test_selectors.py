"""The report reads whole tables at a time (its number of queries does not depend on the items), and
reads them by COPY on PostgreSQL with the same values as the ORM."""
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval.models import Prediction
from modeleval.selectors import mc_picks
from reports.contract import ReportOptions
from reports.selectors.expressions import AccPick
from reports.service import make_report
from tests.conftest import DEMO_DATA
from tests.reports import factories


def benchmark_with(tmp_path, slug, n_items):
    path = tmp_path / f"{slug}.jsonl"
    tasks = ["emotion_detection", "dialogue_nli"]
    with open(path, "w") as out:
        for n in range(n_items):
            out.write(json.dumps({"id": f"{slug}-{n}", "task": tasks[n % 2], "domain": f"d{n % 3}",
                                  "dialogue": ["speaker1: hi", "speaker2: hello"],
                                  "options": {"A": "one", "B": "two", "C": "three"}, "label": "ABC"[n % 3]}) + "\n")
    import_items(path, "dialogbench", slug)
    bench = Benchmark.objects.get(slug=slug)
    items = list(Item.objects.filter(task__benchmark=bench))
    campaign = factories.human_campaign(bench, {i.pk: [i.source_gold["answer"], "A", "B"] for i in items},
                                        name=f"{slug}-humans", batch_size=max(2, n_items // 4))
    factories.frozen_gold(campaign)
    for name, mode in (("m1", "loglikelihood"), ("m2", "generate")):
        factories.model_run(bench, list(bench.tasks.all()), f"{slug}-{name}", {
            i.pk: {"answer": "A", "answer_norm": "B", "answer_per_token": "A",
                   "options": factories.options_for({"A": -1.0, "B": -2.0, "C": -3.0})} for i in items}, mode=mode)


def queries_for(slug):
    with CaptureQueriesContext(connection) as captured:
        report = make_report(slug, options=ReportOptions(n_resamples=20))
    assert report["multiple_choice"]["tasks"]
    return len(captured)


@pytest.mark.django_db
def test_query_count_does_not_grow_with_items(tmp_path):
    benchmark_with(tmp_path, "small", 10)
    benchmark_with(tmp_path, "large", 200)
    small, large = queries_for("small"), queries_for("large")
    assert small == large, (small, large)
    assert large == 18  # one per table (see reports.selectors) and 3 for which gold and why (reports.gold)


@pytest.mark.django_db
def test_copy_reads_the_same_values_as_the_orm(tmp_path):
    """Tabs, newlines, backslashes, quotes, NULLs and non-ASCII text survive COPY's text format."""
    if connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's; other databases read through values_list")
    from annotation.models import Annotation
    from reports.selectors import columns, resolve_scope, row_querysets, task_rows

    benchmark_with(tmp_path, "odd", 6)
    odd = ["tab\there", "new\nline", "back\\slash \\N", 'quote " and \\t', "ünïcödé ✓", None]
    for annotation, value in zip(Annotation.objects.order_by("pk")[:6], odd, strict=False):
        annotation.value = value
        annotation.dwell_seconds = None if value is None else 1.5
        annotation.save()
    scope = resolve_scope("odd")
    for name, queryset in row_querysets(scope, task_rows(scope)).items():
        copied, orm = columns(queryset, copy=True), columns(queryset, copy=False)
        key = [copied[k] for k in copied]
        assert (sorted(zip(*key, strict=True), key=repr)
                == sorted(zip(*[orm[k] for k in copied], strict=True), key=repr)), name
    values = columns(row_querysets(scope, task_rows(scope))["annotations"], copy=True)["value"]
    assert set(odd) <= set(values)


@pytest.mark.django_db
def test_the_acc_pick_read_in_sql_is_the_scorers_acc_rule_ties_included():
    """reports.selectors.AccPick (SQL, so options never travel) and modeleval's rule_picks (Python) are one
    rule written in two languages: the first of equal maxima, as numpy.argmax in lm-eval."""
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db")
    bench = Benchmark.objects.get(slug="db")
    items = list(Item.objects.filter(task__benchmark=bench).order_by("pk")[:5])
    cases = [{"A": -2.0, "B": -1.0, "C": -3.0}, {"A": -1.0, "B": -1.0, "C": -3.0}, {"C": -0.5, "A": -0.5, "B": -9.0},
             {"A": -4.0, "B": -4.0, "C": -4.0}, {"B": -1e-9, "A": 0.0}]
    factories.model_run(bench, list(bench.tasks.all()), "m",
                        {item.pk: {"answer": "A", "options": factories.options_for(case)}
                         for item, case in zip(items, cases, strict=True)})
    rows = Prediction.objects.annotate(pick=AccPick("options")).order_by("item_id").values_list("pick", "options")
    assert [pick for pick, _ in rows] == [mc_picks(options)["acc"] for _, options in rows] == ["B", "A", "C", "A", "A"]
