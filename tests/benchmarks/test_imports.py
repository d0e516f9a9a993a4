import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from benchmarks.actions import export_items, import_items
from benchmarks.formschema import validate_answers
from benchmarks.importers import fed as fed_format
from benchmarks.models import Benchmark, Item, Task
from tests.conftest import DEMO_DATA


@pytest.mark.django_db
def test_fed_import_gives_500_items_in_two_tasks_and_a_second_import_adds_nothing(fed_path):
    summary = import_items(fed_path, "fed", "fed")
    assert (summary.tasks_created, summary.items_created) == (2, 500)
    turn, dialog = Task.objects.get(slug="fed-turn"), Task.objects.get(slug="fed-dialog")
    assert len(turn.form["questions"]) == 9 and len(dialog.form["questions"]) == 11
    assert turn.form["primary"] == dialog.form["primary"] == "overall"
    assert (turn.items.count(), dialog.items.count()) == (375, 125)
    again = import_items(fed_path, "fed", "fed")
    assert (again.tasks_created, again.items_created, again.items_unchanged) == (0, 0, 500)
    assert Item.objects.count() == 500


@pytest.mark.django_db
def test_fed_scales_are_read_from_the_data(fed_path):
    import_items(fed_path, "fed", "fed")
    scales = {q["key"]: (q["scale"]["min"], q["scale"]["max"]) for t in Task.objects.all() for q in t.form["questions"]}
    assert scales["overall"] == (0, 4)
    assert scales["understandable"] == (0, 1) and scales["consistent"] == (0, 1)
    assert scales["interesting"] == (0, 2)


def test_fed_text_ratings_are_missing_not_zero():
    assert fed_format.numeric_rating("N/A (no errors)") is None
    assert fed_format.numeric_rating(0) == 0
    assert fed_format.numeric_rating(True) is None


@pytest.mark.django_db
def test_fed_turn_item_keeps_dialogue_response_and_system(fed_path):
    import_items(fed_path, "fed", "fed")
    source = json.loads(fed_path.read_text())[0]
    item = Item.objects.get(external_id="fed-000")
    assert item.dialogue[0] == {"speaker": "User", "text": "Hi!"}
    assert len(item.dialogue) == len([line for line in source["context"].split("\n") if line.strip()])
    assert item.fields["response"]["text"] == source["response"].partition(":")[2].strip()
    assert item.meta["system"] == source["system"]


@pytest.mark.django_db
@pytest.mark.parametrize("format_name,filename", [("dialogbench", "dialogbench_sample.jsonl"),
                                                  ("diqad", "diqad_sample.jsonl")])
def test_round_trip_through_our_jsonl_is_byte_identical(tmp_path, format_name, filename):
    import_items(DEMO_DATA / filename, format_name, "original")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    export_items("original", "jsonl", first)
    import_items(first, "jsonl", "copy")
    export_items("copy", "jsonl", second)
    assert first.read_bytes() == second.read_bytes()
    copied = Item.objects.filter(task__benchmark__slug="copy").count()
    assert copied == Item.objects.filter(task__benchmark__slug="original").count() > 0


@pytest.mark.django_db
def test_fed_round_trip_is_byte_identical(tmp_path, fed_path):
    import_items(fed_path, "fed", "fed")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert export_items("fed", "jsonl", first) == 500
    import_items(first, "jsonl", "fed-copy")
    export_items("fed-copy", "jsonl", second)
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.django_db
def test_dialogbench_sample_tasks_gold_and_meta():
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db")
    assert set(Task.objects.values_list("slug", flat=True)) == {
        "emotion_detection", "intent_classification", "offensive_detection", "dialogue_nli",
        "multi_turn_response_generation"}
    item = Item.objects.get(external_id="db-en-nli-001")
    assert list(item.fields["options"]) == ["A", "B", "C"] and item.source_gold == {"answer": "B"}
    assert item.meta["personality"]["speaker2"] == "busy" and item.fields["hypothesis"].startswith("speaker2 will")
    assert item.dialogue[1]["speaker"] == "speaker2"
    assert Task.objects.get(slug="offensive_detection").dimension == "safety"


def test_dialogbench_dimensions_are_the_papers_table_2():
    """Ou et al. (2024), Table 2: emotion detection, summarisation and relation classification measure
    consistency; commonsense-aware response generation measures correctness."""
    from benchmarks.importers.dialogbench import TASKS

    by_dimension = {}
    for slug, (_, dimension) in TASKS.items():
        by_dimension.setdefault(dimension, set()).add(slug)
    assert by_dimension == {
        "correctness": {"knowledge_grounded_response_generation", "intent_classification", "slot_filling",
                        "commonsense_aware_response_generation"},
        "coherence": {"multi_turn_response_generation", "dialogue_infilling"},
        "consistency": {"personality_grounded_response_generation", "emotion_detection", "dialogue_summarization",
                        "dialogue_nli", "relation_classification"},
        "safety": {"offensive_detection"},
    }


@pytest.mark.django_db
def test_diqad_form_enforces_conditional_reasons_and_exclusions():
    import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "dq")
    form = Task.objects.get().form
    assert validate_answers(form, {"needs_verification": False, "score": 1, "reasons_1": ["incomplete"]}) == set()
    assert validate_answers(form, {"needs_verification": False, "score": -1}) == {"score"}
    assert validate_answers(form, {"needs_verification": True, "score": "abandon"}) == {"score"}
    with pytest.raises(ValidationError) as missing:
        validate_answers(form, {"needs_verification": False, "score": 0})
    assert "reasons_0" in missing.value.message_dict
    with pytest.raises(ValidationError) as not_asked:
        validate_answers(form, {"needs_verification": False, "score": 2, "reasons_1": ["incomplete"]})
    assert "not asked" in not_asked.value.message_dict["reasons_1"][0]
    with pytest.raises(ValidationError) as wrong_reason:
        validate_answers(form, {"needs_verification": False, "score": 1, "reasons_1": ["grammatical_error"]})
    assert "reasons_1" in wrong_reason.value.message_dict


@pytest.mark.django_db
def test_task_form_is_validated_on_save():
    benchmark = Benchmark.objects.create(slug="b", name="B")
    with pytest.raises(ValidationError, match="primary"):
        Task.objects.create(benchmark=benchmark, slug="t", name="T",
                            form={"primary": "x", "questions": [{"key": "a", "type": "boolean"}]})
    with pytest.raises(ValidationError, match="type"):
        Task.objects.create(benchmark=benchmark, slug="t", name="T",
                            form={"primary": "a", "questions": [{"key": "a", "type": "essay"}]})


@pytest.mark.django_db
def test_commands_report_errors_and_success(tmp_path, capsys):
    from django.core.management.base import CommandError
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1')
    with pytest.raises(CommandError, match="bad.jsonl:line 1.*\n*Nothing was imported"):
        call_command("import_items", str(bad), format="diqad", benchmark="x")
    call_command("import_items", str(DEMO_DATA / "diqad_sample.jsonl"), format="diqad", benchmark="dq")
    call_command("export_items", str(tmp_path / "out.jsonl"), benchmark="dq", format="jsonl")
    out = capsys.readouterr().out
    assert "8 items created" in out and "8 items of dq written" in out
