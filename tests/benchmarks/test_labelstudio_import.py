"""A Label Studio project export from any project (not ours): detected, its tasks as items, each annotator's labels
apart (Choices, Rating, TextArea and Pairwise results), each model version's predictions as an imported run, in one
import; broken and hostile files refused naming the file, the task and the field, with nothing written."""
import json

import pytest

from annotation.models import Annotation, Campaign
from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure, detect
from benchmarks.models import Benchmark, Item, Task
from modeleval.models import EvalRun, Prediction

pytestmark = pytest.mark.django_db


def result(name, kind, value):
    return {"id": f"r-{name}", "from_name": name, "to_name": "text", "type": kind, "value": value}


def tasks():
    """Two tasks as Label Studio 1.23 exports them: annotators 1 and 7, one cancelled annotation, a prediction."""
    return [
        {"id": 101, "data": {"text": "User: is it safe?\nBot: yes", "source": "forum"}, "project": 3,
         "annotations": [
             {"id": 1, "completed_by": 1, "was_cancelled": False, "ground_truth": False, "lead_time": 4.2,
              "result": [result("quality", "choices", {"choices": ["good"]}),
                         result("stars", "rating", {"rating": 4}),
                         result("why", "textarea", {"text": ["clear", "short"]}),
                         {"from_name": "better", "to_name": "left,right", "type": "pairwise",
                          "value": {"selected": "left"}}]},
             {"id": 2, "completed_by": {"id": 7, "email": "ann@lab.org"}, "was_cancelled": False,
              "result": [result("quality", "choices", {"choices": ["bad"]}),
                         result("stars", "rating", {"rating": 2})]}],
         "predictions": [{"model_version": "judge-v1", "score": 0.8,
                          "result": [result("quality", "choices", {"choices": ["good"]})]}]},
        {"id": 102, "data": {"text": "just one line"},
         "annotations": [{"id": 3, "completed_by": 1, "was_cancelled": True, "result": []},
                         {"id": 4, "completed_by": {"id": 7, "email": "ann@lab.org"},
                          "result": [result("quality", "choices", {"choices": ["good"]})]}],
         "predictions": [{"model_version": "judge-v1", "result": [result("quality", "choices",
                                                                          {"choices": ["bad"]})]}]},
    ]


def write(tmp_path, data, name="project.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def counts():
    return (Benchmark.objects.count(), Task.objects.count(), Item.objects.count(), Annotation.objects.count(),
            Campaign.objects.count(), EvalRun.objects.count(), Prediction.objects.count())


def test_a_label_studio_export_comes_in_with_each_annotator_apart_and_its_predictions_as_a_run(tmp_path):
    path = write(tmp_path, tasks())
    assert detect(path) == "labelstudio"
    summary = import_items(path, None, "ls")
    assert (summary.items_created, summary.labels.annotations_created, summary.labels.raters) == (2, 3, 2)
    task = Task.objects.get(benchmark__slug="ls")
    assert task.form["primary"] == "quality"
    kinds = {q["key"]: (q["type"], q.get("options"), q.get("scale")) for q in task.form["questions"]}
    assert kinds["quality"][0] == "single_choice" and [o["value"] for o in kinds["quality"][1]] == ["bad", "good"]
    assert kinds["stars"] == ("scale", None, {"min": 1, "max": 5})
    assert kinds["why"][0] == "text" and kinds["better"][0] == "single_choice"
    first = Item.objects.get(task=task, external_id="101")
    assert first.dialogue == [{"speaker": "User", "text": "is it safe?"}, {"speaker": "Bot", "text": "yes"}]
    assert first.fields == {"source": "forum"}
    assert Item.objects.get(task=task, external_id="102").dialogue == [{"speaker": "text", "text": "just one line"}]
    labels = {(a.annotator.username, a.item.external_id): a.answers for a in Annotation.objects.all()}
    assert labels == {
        ("labelstudio-ls-1", "101"): {"quality": "good", "stars": 4, "why": "clear\nshort", "better": "left"},
        ("labelstudio-ls-ann@lab.org", "101"): {"quality": "bad", "stars": 2},
        ("labelstudio-ls-ann@lab.org", "102"): {"quality": "good"}}
    run = EvalRun.objects.get()
    assert run.model.name == "judge-v1" and run.state == "finished"
    assert sorted(Prediction.objects.values_list("item__external_id", "answer")) == [("101", "good"), ("102", "bad")]
    before = counts()
    again = import_items(path, "labelstudio", "ls")
    assert (again.items_created, again.labels.annotations_created) == (0, 0)
    assert counts() == before


def hostile_cases():
    deep = "[" * 5000 + "]" * 5000
    cases = {
        "not a list": ('{"data": {"text": "x"}, "annotations": []}', None, None),
        "nesting": (deep, None, None),
        "data not an object": ([{"id": 1, "data": ["x"], "annotations": []}], "task 0 (id 1)", "data"),
        "annotations not a list": ([{"id": 1, "data": {"text": "x"}, "annotations": {"a": 1}}], "task 0 (id 1)",
                                   "annotations"),
        "no dialogue": ([{"id": 1, "data": {"other": 3}, "annotations": [
            {"completed_by": 1, "result": [result("q", "choices", {"choices": ["a"]})]}]}], "task 0 (id 1)",
            "data.text"),
        "rating as text": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"completed_by": 1, "result": [result("q", "rating", {"rating": "4"})]}]}], "task 0 (id 1)",
            "annotations[0].result[0].value.rating"),
        "choices not strings": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"completed_by": 1, "result": [result("q", "choices", {"choices": [{"a": 1}]})]}]}], "task 0 (id 1)",
            "annotations[0].result[0].value.choices"),
        "unknown annotator": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"completed_by": "someone", "result": [result("q", "choices", {"choices": ["a"]})]}]}], "task 0 (id 1)",
            "annotations[0].completed_by"),
        "no annotator": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"result": [result("q", "choices", {"choices": ["a"]})]}]}], "task 0 (id 1)",
            "annotations[0].completed_by"),
        "twice by one person": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"completed_by": 1, "result": [result("q", "choices", {"choices": ["a"]})]},
            {"completed_by": 1, "result": [result("q", "choices", {"choices": ["b"]})]}]}], "task 0 (id 1)",
            "annotations[1].completed_by"),
        "result not an object": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"completed_by": 1, "result": ["good"]}]}], "task 0 (id 1)", "annotations[0].result[0]"),
        "unknown result type": ([{"id": 1, "data": {"text": "x"}, "annotations": [
            {"completed_by": 1, "result": [result("q", "rectanglelabels", {"x": 1})]}]}], "task 0 (id 1)",
            "annotations[0].result[0].type"),
        "prediction without a model": ([{"id": 1, "data": {"text": "x"}, "annotations": [], "predictions": [
            {"result": [result("q", "choices", {"choices": ["a"]})]}]}], "task 0 (id 1)",
            "predictions[0].model_version"),
    }
    return cases


@pytest.mark.parametrize("case", sorted(hostile_cases()))
def test_broken_and_hostile_files_are_refused_naming_the_task_and_field_with_nothing_written(tmp_path, case):
    data, where, field = hostile_cases()[case]
    path = write(tmp_path, data)
    before = counts()
    with pytest.raises(ImportFailure) as refused:
        import_items(path, "labelstudio", "hostile")
    print(case, "->", refused.value)
    assert refused.value.path == str(path)
    if where is not None:
        assert (refused.value.location, refused.value.field) == (where, field)
    assert counts() == before


def test_a_result_for_a_control_our_export_did_not_write_is_refused(tmp_path):
    form = {"primary": "q", "questions": [{"key": "q", "type": "single_choice",
                                           "options": [{"value": "a", "label": "a"}]}]}
    hb = {"task": "t", "external_id": "e1", "dialogue": [{"speaker": "A", "text": "hi"}], "fields": {}, "meta": {},
          "source_gold": None, "form": form}
    good = [{"id": 1, "data": {"dialogue": hb["dialogue"], "hb": hb}, "annotations": [
        {"completed_by": 1, "result": [result("q", "choices", {"choices": ["a"]})]}]}]
    missing = json.loads(json.dumps(good))
    missing[0]["annotations"][0]["result"].append(result("gone", "choices", {"choices": ["a"]}))
    wrong_value = json.loads(json.dumps(good))
    wrong_value[0]["annotations"][0]["result"][0]["value"]["choices"] = ["z"]
    before = counts()
    for data, field in ((missing, "annotations[0].result[1].from_name"), (wrong_value, "annotations[0].result (q)")):
        with pytest.raises(ImportFailure) as refused:
            import_items(write(tmp_path, data), "labelstudio", "ours")
        print(refused.value)
        assert (refused.value.location, refused.value.field) == ("task 0 (id 1)", field)
    assert counts() == before
    bad_slug = json.loads(json.dumps(good))
    bad_slug[0]["data"]["hb"]["task"] = "x" * 101
    with pytest.raises(ImportFailure) as refused:
        import_items(write(tmp_path, bad_slug), "labelstudio", "ours")
    assert refused.value.field == "data.hb.task"
    assert counts() == before
    assert import_items(write(tmp_path, good), "labelstudio", "ours").labels.annotations_created == 1


def test_a_task_that_is_no_object_after_a_good_one_is_refused_by_its_index(tmp_path):
    data = tasks() + ["stray"]
    before = counts()
    with pytest.raises(ImportFailure) as refused:
        import_items(write(tmp_path, data), "labelstudio", "stray")
    assert refused.value.location == "task 2" and "expected a task object" in str(refused.value)
    assert counts() == before
