"""A campaign out as a Label Studio project and back in: items, each person's labels, the gold and every run's
predictions counted and hashed before and after; importing the same file twice adds nothing; and Label Studio 1.23.2
itself (its own venv, built as perf/labelstudio_target.py builds it) imports the export with no error and shows each
annotator's annotations and the predictions."""
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Annotation
from benchmarks.actions import import_items
from benchmarks.models import Benchmark, Item
from modeleval.models import Prediction
from reports import labelstudio as export
from tests.reports.factories import demo_three_raters, frozen_gold, human_campaign, model_run, users, wrong_option

pytestmark = pytest.mark.django_db

FORM = {"primary": "quality", "questions": [
    {"key": "quality", "type": "single_choice", "label": "Quality",
     "options": [{"value": 2, "label": "meets all dimensions"}, {"value": 1, "label": "lacks"},
                 {"value": 0, "label": "fails"}, {"value": -1, "label": "private data", "excludes": True}]},
    {"key": "overall", "type": "scale", "label": "Overall", "scale": {"min": 1, "max": 5}},
    {"key": "fluency", "type": "scale", "label": "Fluency", "scale": {"min": 0, "max": 2}, "required": False},
    {"key": "verify", "type": "boolean", "label": "Needs a check?"},
    {"key": "reasons", "type": "multi_choice", "label": "Reasons", "required": False,
     "options": [{"value": "short", "label": "short"}, {"value": "rude", "label": "rude"}]},
    {"key": "first_ai", "type": "index", "label": "First AI turn", "required": False},
    {"key": "note", "type": "text", "label": "Note", "required": False}]}


PAIR_FORM = {"primary": "better", "questions": [
    {"key": "better", "type": "single_choice", "label": "Better",
     "options": [{"value": "left", "label": "conversation 1"}, {"value": "right", "label": "conversation 2"}]}]}


def rich_benchmark(tmp_path):
    """A benchmark of our own shape whose form asks every kind of question, three items with a source gold."""
    lines = [{"type": "benchmark", "name": "Rich", "language": "en"},
             {"type": "task", "slug": "rich", "name": "Rich form", "form": FORM}]
    for n in range(3):
        lines.append({"type": "item", "task": "rich", "external_id": f"r{n}",
                      "dialogue": [{"speaker": "user", "text": f"hello {n}"}, {"speaker": "bot", "text": "hi 你好"}],
                      "fields": {"response": {"speaker": "bot", "text": f"answer {n}"}}, "meta": {"domain": "chat"},
                      "source_gold": {"quality": n % 3}})
    lines.insert(2, {"type": "task", "slug": "pair", "name": "Which conversation is better?", "form": PAIR_FORM})
    for n in range(2):
        lines.append({"type": "item", "task": "pair", "external_id": f"p{n}",
                      "dialogue": [{"speaker": "A", "text": f"first {n}"}, {"speaker": "B", "text": "ok"}],
                      "fields": {"conversation_2": [{"speaker": "A", "text": f"second {n}"}]}, "meta": {}})
    path = tmp_path / "rich.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), encoding="utf-8")
    import_items(path, "jsonl", "rich")
    bench = Benchmark.objects.get(slug="rich")
    items = list(Item.objects.filter(task__benchmark=bench, task__slug="rich").order_by("external_id"))
    pairs = Item.objects.filter(task__benchmark=bench, task__slug="pair").order_by("external_id")
    answers = {item.pk: [{"quality": 2, "overall": 5, "fluency": 0, "verify": True, "reasons": ["short", "rude"],
                          "first_ai": 1, "note": "fine\nreally"},
                         {"quality": n % 3, "overall": 1 + n, "verify": False},
                         None if n == 0 else {"quality": -1, "overall": 3, "verify": False, "note": "名前"}]
               for n, item in enumerate(items)}
    answers.update({pair.pk: [{"better": "left"}, {"better": "right" if n else "left"}]
                    for n, pair in enumerate(pairs)})
    campaign = human_campaign(bench, answers, name="rich")
    model_run(bench, list(bench.tasks.filter(slug="rich")), "rater-model",
              {item.pk: {"answer": str(n % 3), "rating": float(n % 3)} for n, item in enumerate(items)},
              mode="rating")
    return campaign


def demo_campaign():
    bench, items, answers = demo_three_raters()
    campaign = human_campaign(bench, answers, name="demo")
    model_run(bench, list(bench.tasks.all()), "mc-model",
              {item.pk: {"answer": item.source_gold["answer"] if n % 2 else wrong_option(item)}
               for n, item in enumerate(items)})
    model_run(bench, list(bench.tasks.all()), "unparsed-model",
              {items[0].pk: {"answer": "", "parse_status": "unparsable"}})
    return campaign


def fingerprint(benchmark, person_of):
    """Counts and sha256 of the benchmark's items (content hash, source gold inside), each person's current labels
    (`person_of`: a user's name as the file knows them) and every run's parsed answers per item."""
    items = sorted(Item.objects.filter(task__benchmark=benchmark).values_list("task__slug", "external_id",
                                                                                "content_hash"))
    labels = sorted((a.item.task.slug, a.item.external_id, person_of(a.annotator.username),
                     json.dumps(a.answers, sort_keys=True, ensure_ascii=False))
                    for a in Annotation.objects.filter(item__task__benchmark=benchmark, superseded_at__isnull=True)
                    .select_related("item__task", "annotator"))
    predictions = sorted((p.item.task.slug, p.item.external_id, p.answer)
                         for p in Prediction.objects.filter(item__task__benchmark=benchmark, variant="")
                         .exclude(answer="").select_related("item__task"))
    gold = sorted((slug, ext, json.dumps(g, sort_keys=True)) for slug, ext, g in
                  Item.objects.filter(task__benchmark=benchmark).values_list("task__slug", "external_id",
                                                                             "source_gold"))

    def digest(rows):
        return len(rows), hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()
    return {"items": digest(items), "labels": digest(labels), "gold": digest(gold),
            "predictions": digest(predictions),
            "annotators": len({row[2] for row in labels})}


def write_project(campaign, tmp_path, name):
    path = tmp_path / f"{name}.json"
    call_command("export_labelstudio", str(path), campaign=campaign.pk)
    return path


@pytest.mark.parametrize("make", ["rich", "demo"])
def test_a_campaign_goes_out_and_comes_back_with_nothing_lost(tmp_path, make):
    campaign = rich_benchmark(tmp_path) if make == "rich" else demo_campaign()
    before = fingerprint(campaign.benchmark, export.email_of)
    path = write_project(campaign, tmp_path, make)
    tasks = json.loads(path.read_text(encoding="utf-8"))
    assert path.with_suffix(".xml").read_text().startswith("<View>")
    assert sum(len(t["annotations"]) for t in tasks) == before["labels"][0]
    assert sum(len(t["predictions"]) for t in tasks) == before["predictions"][0]

    summary = import_items(path, None, f"{make}-back")  # the format is detected
    prefix = f"labelstudio-{make}-back-"
    after = fingerprint(Benchmark.objects.get(slug=f"{make}-back"), lambda name: name.removeprefix(prefix))
    print(make, json.dumps(before), json.dumps(after), str(summary), sep="\n")
    assert after == before
    again = import_items(path, "labelstudio", f"{make}-back")
    assert (again.items_created, again.labels.annotations_created) == (0, 0)
    assert not [run for run in again.predictions.runs if run[3]]
    assert Annotation.objects.filter(item__task__benchmark__slug=f"{make}-back").count() == before["labels"][0]


def test_the_config_matches_the_form_control_by_control(tmp_path):
    campaign = rich_benchmark(tmp_path)
    project = export.campaign_project(campaign)
    config = project["label_config"]
    for tag in ('<Choices name="quality"', '<Choice value="2: meets all dimensions" alias="2"/>',
                '<Rating name="overall" toName="dialogue" maxRating="5"', '<Number name="fluency"',
                '<Choices name="verify"', '<Choices name="reasons" toName="dialogue" choice="multiple"',
                '<Number name="first_ai" toName="dialogue" min="0"', '<TextArea name="note"',
                '<Paragraphs name="dialogue" value="$dialogue"', '<Text name="response" value="$response"/>',
                '<Pairwise name="better" toName="dialogue,conversation_2"/>',
                '<Paragraphs name="conversation_2" value="$conversation_2"'):
        assert tag in config
    pair = next(t for t in project["tasks"] if t["data"]["hb"]["task"] == "pair")
    assert pair["annotations"][0]["result"] == [{"from_name": "better", "to_name": "dialogue",
                                                 "type": "pairwise", "value": {"selected": "left"}}]
    first = next(t for t in project["tasks"] if t["data"]["hb"]["task"] == "rich")
    assert first["data"]["response"] == "bot: answer 0"
    assert first["data"]["hb"]["gold"] == {"value": 0, "citation": "source"}
    assert {a["completed_by"]["email"] for a in first["annotations"]} == {
        "rich-rater-1@humanbaseline.invalid", "rich-rater-2@humanbaseline.invalid"}
    assert first["predictions"][0]["model_version"].startswith("rater-model@run-")


def test_the_gold_the_campaign_report_cites_travels_with_its_citation(tmp_path):
    campaign = rich_benchmark(tmp_path)
    version = frozen_gold(campaign)
    project = export.campaign_project(campaign)
    cited = {t["data"]["hb"]["external_id"]: t["data"]["hb"]["gold"] for t in project["tasks"]}
    assert cited["r1"] == {"value": 1, "citation": version.citation}


def test_a_reader_who_may_not_see_labels_exports_none(tmp_path):
    campaign = rich_benchmark(tmp_path)
    (stranger,) = users("stranger", 1)
    project = export.campaign_project(campaign, user=stranger)
    assert project["counts"]["annotations"] == 0


def labelstudio_venv():
    from perf import labelstudio_target

    exe = labelstudio_target.VENV / "bin" / "label-studio"
    if not exe.exists():
        print(f"skipping: the Label Studio venv is absent ({labelstudio_target.VENV}; see perf/labelstudio_target.py)")
        pytest.skip(f"the Label Studio venv is absent ({labelstudio_target.VENV}; see perf/labelstudio_target.py)")
    return labelstudio_target, exe


@pytest.mark.slow
@pytest.mark.parametrize("make", ["rich", "demo"])
def test_label_studio_itself_imports_the_export_with_no_error_and_shows_every_annotation(tmp_path, settings, make):
    target, exe = labelstudio_venv()

    campaign = rich_benchmark(tmp_path) if make == "rich" else demo_campaign()
    project = export.campaign_project(campaign)
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(project["tasks"], ensure_ascii=False), encoding="utf-8")
    template = target.initialized_data_dir(exe, Path(settings.DATA_DIR) / f"labelstudio-{target.VERSION}-initialized")
    data_dir = tmp_path / "ls-data"
    shutil.copytree(template, data_dir)
    seen = target.import_project(project["label_config"], tasks, project["annotators"], data_dir, tmp_path)
    print(json.dumps({k: v for k, v in seen.items() if k != "response"}, indent=1))
    assert seen["project_status"] == 201, seen["project_errors"]
    assert seen["import_status"] == 201, seen["response"]
    assert seen["validation_errors"] == []
    counts = project["counts"]
    assert (seen["tasks"], seen["annotations"], seen["predictions"]) == (
        counts["tasks"], counts["annotations"], counts["predictions"])
    expected = {}
    for task in project["tasks"]:
        for annotation in task["annotations"]:
            email = annotation["completed_by"]["email"]
            expected[email] = expected.get(email, 0) + 1
    assert seen["per_annotator"] == expected
    assert seen["exported_annotations"] == counts["annotations"]
    assert seen["exported_results"] == sum(len(a["result"]) for t in project["tasks"] for a in t["annotations"])
    if make == "rich":  # the check can fail: a config without the Rating control finds the results it lacks
        lacking = "\n".join(line for line in project["label_config"].splitlines() if "<Rating" not in line)
        shutil.rmtree(data_dir)
        shutil.copytree(template, data_dir)
        refused = target.import_project(lacking, tasks, project["annotators"], data_dir, tmp_path)
        print(refused["validation_errors"][:3])
        assert any("overall" in error for error in refused["validation_errors"])
