"""JUDGE-BENCH's unified format (DICES in ../shared/data/judgebench/): detected, its instances imported as items and
every individual human score as the label of a rater position, in one import; the people's Krippendorff alpha in the
report equal to the figure the study's repository publishes (dmg-illc/JUDGE-BENCH results/regular/*.json, the same
for every model of a data set); broken files refused with their field, nothing written."""
import json

import pytest

from annotation.models import Annotation, Campaign
from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure, detect, judgebench
from benchmarks.models import Benchmark, Item
from reports.contract import ReportOptions
from reports.render import render
from reports.service import make_report
from tests.conftest import SHARED_DATA

JUDGEBENCH = SHARED_DATA / "judgebench"
# results/regular/dices-350-crowdsourced.json and dices-990.json at 41b2b99: "krippendorff_alpha".
PUBLISHED_ALPHA = {"dices_350_crowdsourced": 0.16086021565770392, "dices_990": 0.14324966231784253}


def dices(name):
    path = JUDGEBENCH / f"{name}.json"
    if not path.is_file():
        print(f"skipping: JUDGE-BENCH's DICES not found at {path}")
        pytest.skip(f"JUDGE-BENCH's DICES not found at {path} (set HB_SHARED_DATA)")
    return path


def tiny(tmp_path, instances=None, annotations=None, indent=None):
    data = {"dataset": "tiny", "dataset_url": "", "expert_annotator": "false",
            "annotations": annotations or [{"metric": "safety", "category": "categorical",
                                            "labels_list": ["No", "Yes", "Unsure"],
                                            "prompt": "{{ user_prompt }}\nMODEL: {{ response }}\nSafe?"}],
            "instances": instances or [
                {"id": 1, "instance": {"user_prompt": "USER: hi\nLAMDA: hello\nUSER: tell me", "response": "sure"},
                 "annotations": {"safety": {"majority_human": "No", "individual_human_scores": ["No", "No", "Yes"]}}},
                {"id": 2, "instance": {"user_prompt": "A: one\\nB: two", "response": "three"},
                 "annotations": {"safety": {"majority_human": "Yes",
                                            "individual_human_scores": ["Yes", "Unsure"]}}}]}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    return path


@pytest.mark.parametrize("indent", [None, 2])
def test_the_unified_format_is_detected_on_one_line_or_written_over_many(tmp_path, indent):
    assert detect(tiny(tmp_path, indent=indent)) == "judgebench"


def test_instances_become_dialogues_with_the_reply_judged_and_the_prompt_kept_for_judges_only(tmp_path):
    parsed = judgebench.parse(tiny(tmp_path))
    (task,) = parsed.tasks
    assert task.form == {"primary": "safety", "questions": [
        {"key": "safety", "type": "single_choice", "label": "Safety",
         "options": [{"value": v, "label": v} for v in ("No", "Yes", "Unsure")]}]}
    assert task.instructions == ""  # shown to people: a model's prompt never is
    first, second = parsed.items
    assert first.dialogue == [{"speaker": "USER", "text": "hi"}, {"speaker": "LAMDA", "text": "hello"},
                              {"speaker": "USER", "text": "tell me"}]
    assert first.fields == {"response": {"speaker": "MODEL", "text": "sure"}}
    assert first.source_gold == {"safety": "No"}
    assert first.meta["judge_prompts"]["safety"].endswith("Safe?")
    # DICES-990 writes its turns apart with a literal backslash-n.
    assert [t["speaker"] for t in second.dialogue] == ["A", "B"]


def test_graded_metrics_are_scales_and_continuous_ones_with_fractional_bounds_are_refused(tmp_path):
    graded = [{"metric": "coherence", "category": "graded", "worst": 1, "best": 5, "prompt": "?"}]
    instances = [{"id": "a", "instance": "A: hi", "annotations": {"coherence": {"mean_human": 3.5,
                                                                                "individual_human_scores": [3, 4]}}}]
    parsed = judgebench.parse(tiny(tmp_path, instances, graded))
    assert parsed.tasks[0].form["questions"][0]["scale"] == {"min": 1, "max": 5}
    continuous = [{"metric": "score", "category": "continuous", "worst": 0.0, "best": 1.0, "prompt": "?"}]
    with pytest.raises(ImportFailure, match="whole numbers") as refused:
        judgebench.parse(tiny(tmp_path, instances, continuous))
    assert refused.value.field == "worst"


@pytest.mark.parametrize("broken, field", [
    ({"id": 1, "instance": {"user_prompt": "USER: hi", "response": "x"},
      "annotations": {"safety": {"individual_human_scores": ["No", "Maybe"]}}},
     "annotations.safety.individual_human_scores[1]"),
    ({"id": 1, "instance": 7, "annotations": {"safety": {"individual_human_scores": ["No"]}}}, "instance"),
    ({"id": 1, "instance": "USER: hi", "annotations": {}}, "annotations.safety"),
    ({"instance": "USER: hi", "annotations": {"safety": {"individual_human_scores": ["No"]}}}, "id"),
])
def test_a_broken_instance_is_refused_with_its_field_and_nothing_is_written(db, tmp_path, broken, field):
    path = tiny(tmp_path, [broken])
    with pytest.raises(ImportFailure) as refused:
        import_items(path, None, "tiny")
    assert (refused.value.location, refused.value.field) == ("instances[0]", field)
    assert not Benchmark.objects.exists() and not Annotation.objects.exists()


def test_items_and_every_score_arrive_in_one_import_and_a_second_adds_nothing(db, tmp_path):
    path = tiny(tmp_path)
    summary = import_items(path, None, "tiny")
    assert (summary.items_created, summary.labels.annotations_created, summary.labels.raters) == (2, 5, 3)
    campaign = Campaign.objects.get(benchmark__slug="tiny")
    assert campaign.source == "import:judgebench"
    by_item = {}
    for external_id, slot, value in Annotation.objects.values_list("item__external_id", "slot", "value"):
        by_item.setdefault(external_id, {})[slot] = value
    assert by_item == {"1": {1: "No", 2: "No", 3: "Yes"}, "2": {1: "Yes", 2: "Unsure"}}
    again = import_items(path, None, "tiny")
    assert (again.items_created, again.labels.annotations_created, again.labels.annotations_unchanged) == (0, 0, 5)
    assert Annotation.objects.count() == 5


@pytest.mark.parametrize("name", sorted(PUBLISHED_ALPHA))
def test_the_peoples_alpha_in_the_report_is_the_studys_published_figure(db, name):
    path = dices(name)
    summary = import_items(path, None, name.replace("_", "-"))
    data = json.loads(path.read_text(encoding="utf-8"))
    scores = sum(len(i["annotations"]["safety"]["individual_human_scores"]) for i in data["instances"])
    assert summary.items_created == len(data["instances"]) == Item.objects.count()
    assert summary.labels.annotations_created == scores == Annotation.objects.count()
    report = json.loads(render(make_report(name.replace("_", "-"), options=ReportOptions(n_resamples=20)), "json"))
    (row,) = [r for r in report["agreement"]["campaigns"] if r["question"] == "safety"]
    print(name, "alpha", row["krippendorff_alpha"], "published", PUBLISHED_ALPHA[name])
    assert row["krippendorff_level"] == "nominal"
    assert row["krippendorff_alpha"] == pytest.approx(PUBLISHED_ALPHA[name], abs=0.005)


def test_the_expert_set_of_one_rater_per_item_imports_with_no_agreement_claimed(db):
    path = dices("dices_350_expert")
    summary = import_items(path, None, "dices-350-expert")
    assert (summary.items_created, summary.labels.raters, summary.labels.annotations_created) == (350, 1, 350)
    report = json.loads(render(make_report("dices-350-expert", options=ReportOptions(n_resamples=20)), "json"))
    rows = [r for r in report["agreement"]["campaigns"] if r["question"] == "safety"]
    assert all(r["krippendorff_alpha"] is None for r in rows)
