"""Every malformed input gets an error naming file, place and field, and writes nothing."""
import json

import pytest

from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure
from benchmarks.models import Benchmark, Item, Task

GOOD_DB = {
    "id": "x1", "task": "emotion_detection", "domain": "daily life",
    "dialogue": ["speaker1: I passed my exam!", "speaker2: Congratulations!"],
    "options": {"A": "Joy", "B": "Anger", "C": "Fear", "D": "Sadness"}, "label": "A",
}
GOOD_DIQAD = {"id": "d1", "domain": "car", "label": 1, "reasons": ["incomplete"],
              "dialogue": [{"speaker": "user", "text": "Brakes squeak?"}, {"speaker": "expert", "text": "Pads."}]}


def db(**changes):
    record = {**GOOD_DB, **changes}
    return json.dumps({k: v for k, v in record.items() if v is not DROP})


def diqad(**changes):
    return json.dumps({k: v for k, v in {**GOOD_DIQAD, **changes}.items() if v is not DROP})


DROP = object()
FED_OK = {"context": "User: Hi\nSystem: Hello", "response": "System: How are you?",
          "annotations": {q: [1, 1, 1, 1, 1] for q in ["Interesting", "Engaging", "Specific", "Relevant", "Correct",
                                                         "Semantically appropriate", "Understandable", "Fluent", "Overall"]}}


def fed_with(**changes):
    record = json.loads(json.dumps(FED_OK))
    for key, value in changes.items():
        if key == "rating":
            record["annotations"]["Fluent"][2] = value
        elif value is DROP:
            record.pop(key)
        else:
            record[key] = value
    return json.dumps([FED_OK, record], indent=1)


# (name, format, file content as str or bytes, expected location, expected field, words in the message)
CASES = [
    ("truncated_json", "dialogbench", db()[:-15], "line 1", None, "invalid JSON"),
    ("truncated_on_line_3", "dialogbench", "\n".join([db(id="a"), db(id="b"), db(id="c")[:40]]), "line 3", None, "invalid JSON"),
    ("options_wrong_type", "dialogbench", db(options=["Joy", "Anger"]), "line 1", "options", "expected an object"),
    ("options_missing", "dialogbench", db(options=DROP), "line 1", "options", "missing"),
    ("gold_not_among_options", "dialogbench", db(label="E"), "line 1", "label", "expected one of the option keys"),
    ("label_missing", "dialogbench", db(label=DROP), "line 1", "label", "missing"),
    ("label_wrong_type", "dialogbench", db(label=1), "line 1", "label", "expected a string"),
    ("duplicate_external_id", "dialogbench", db() + "\n" + db(), "line 2", "id", "duplicate external id"),
    ("unknown_task", "dialogbench", db(task="telepathy"), "line 1", "task", "expected one of"),
    ("dialogue_not_a_list", "dialogbench", db(dialogue="speaker1: hi"), "line 1", "dialogue", "expected a list"),
    ("turn_without_speaker", "dialogbench", db(dialogue=["no speaker here"]), "line 1", "dialogue[0]", "speaker: text"),
    ("option_keys_skip_a_letter", "dialogbench", db(options={"A": "x", "C": "y"}, label="A"), "line 1", "options", "expected keys"),
    ("single_option", "dialogbench", db(options={"A": "x"}, label="A"), "line 1", "options", "at least 2"),
    ("empty_option_text", "dialogbench", db(options={"A": "x", "B": " "}, label="A"), "line 1", "options.B", "non-empty"),
    ("line_is_an_array", "dialogbench", "[1, 2, 3]", "line 1", None, "expected a JSON object"),
    ("non_utf8_bytes", "dialogbench", db().replace("Congratulations", "F\u00e9licitations").encode("latin-1"), "line 1", None, "not UTF-8"),
    ("empty_file", "dialogbench", "", None, None, "empty"),
    ("blank_lines_only", "diqad", "\n\n  \n", None, None, "empty"),
    ("twenty_megabyte_line", "dialogbench", db(options={"A": "x" * 20_000_000, "B": "y"}), "line 1", None, "over the limit"),
    ("diqad_label_out_of_range", "diqad", diqad(label=3), "line 1", "label", "0, 1 or 2"),
    ("diqad_label_as_text", "diqad", diqad(label="2"), "line 1", "label", "expected an integer"),
    ("diqad_reasons_for_a_2", "diqad", diqad(label=2, reasons=["incomplete"]), "line 1", "reasons", "no reasons"),
    ("diqad_reason_of_other_score", "diqad", diqad(label=1, reasons=["grammatical_error"]), "line 1", "reasons", "expected reasons from"),
    ("diqad_turn_with_extra_keys", "diqad", diqad(dialogue=[{"speaker": "user", "text": "hi", "time": 3}]), "line 1", "dialogue[0]", "unexpected keys"),
    ("diqad_turn_missing_text", "diqad", diqad(dialogue=[{"speaker": "user"}]), "line 1", "dialogue[0]", "speaker"),
    ("fed_not_an_array", "fed", json.dumps(FED_OK), None, None, "JSON array"),
    ("fed_context_missing", "fed", fed_with(context=DROP), "item 1", "context", "dialogue"),
    ("fed_rating_is_a_list", "fed", fed_with(rating=[1, 2]), "item 1", "annotations.Fluent[2]", "integer rating"),
    ("fed_rating_is_boolean", "fed", fed_with(rating=True), "item 1", "annotations.Fluent[2]", "integer rating"),
    ("fed_truncated", "fed", fed_with()[:-30], "line", None, "invalid JSON"),
    ("jsonl_item_before_its_task", "jsonl",
     json.dumps({"type": "item", "task": "t", "external_id": "1", "dialogue": [{"speaker": "a", "text": "b"}]}),
     "line 1", "task", "not declared"),
    ("jsonl_form_without_primary", "jsonl",
     json.dumps({"type": "task", "slug": "t", "name": "T", "form": {"primary": "zzz", "questions": [{"key": "a", "type": "boolean"}]}}),
     "line 1", "form", "primary"),
    ("jsonl_unknown_record_type", "jsonl", json.dumps({"type": "comment"}), "line 1", "type", "expected 'benchmark'"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("name,format_name,content,location,field,words", CASES, ids=[c[0] for c in CASES])
def test_malformed_input_is_refused_and_writes_nothing(tmp_path, name, format_name, content, location, field, words):
    path = tmp_path / f"{name}.data"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(ImportFailure) as caught:
        import_items(path, format_name, "broken")
    failure = caught.value
    message = str(failure)
    assert str(path) in message
    if location:
        assert location in message
    if field:
        assert failure.field == field and f"'{field}'" in message
    assert words in message, message
    assert (Benchmark.objects.count(), Task.objects.count(), Item.objects.count()) == (0, 0, 0)


@pytest.mark.django_db
def test_unknown_format_names_the_known_ones(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(db())
    with pytest.raises(ImportFailure, match="unknown format 'csv'.*dialogbench"):
        import_items(path, "csv", "broken")
    assert Item.objects.count() == 0


@pytest.mark.django_db
def test_missing_file_is_named(tmp_path):
    with pytest.raises(ImportFailure, match="no such file"):
        import_items(tmp_path / "nope.jsonl", "dialogbench", "broken")


@pytest.mark.django_db
def test_bad_benchmark_slug_is_refused(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(db())
    with pytest.raises(ImportFailure, match="expected a slug"):
        import_items(path, "dialogbench", "Not A Slug")
    assert Benchmark.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("format_name,line", [("dialogbench", db), ("diqad", diqad)])
def test_error_on_the_last_line_of_a_long_file_writes_nothing(tmp_path, format_name, line):
    # diqad streams into COPY while parsing: the failure must abort the COPY and roll everything back.
    lines = [line(id=f"ok-{n}") for n in range(5000)] + [line(id="bad", label=7)]
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(ImportFailure, match="line 5001"):
        import_items(path, format_name, "long")
    assert Item.objects.count() == 0 and Benchmark.objects.count() == 0 and Task.objects.count() == 0


@pytest.mark.django_db
def test_changed_item_under_existing_id_is_refused_and_keeps_the_original(tmp_path):
    first = tmp_path / "v1.jsonl"
    first.write_text(db(id="same") + "\n" + db(id="other"))
    import_items(first, "dialogbench", "bench")
    second = tmp_path / "v2.jsonl"
    second.write_text(db(id="new-one") + "\n" + db(id="same", label="B"))
    with pytest.raises(ImportFailure) as caught:
        import_items(second, "dialogbench", "bench")
    assert "'same'" in str(caught.value) and "line 2" in str(caught.value) and "different content" in str(caught.value)
    assert Item.objects.count() == 2
    assert Item.objects.get(external_id="same").source_gold == {"answer": "A"}
    assert not Item.objects.filter(external_id="new-one").exists()


@pytest.mark.django_db
def test_changed_form_of_existing_task_is_refused(tmp_path):
    task_line = {"type": "task", "slug": "t", "name": "T", "form": {"primary": "a", "questions": [{"key": "a", "type": "boolean"}]}}
    item_line = {"type": "item", "task": "t", "external_id": "1", "dialogue": [{"speaker": "a", "text": "b"}]}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(task_line) + "\n" + json.dumps(item_line))
    import_items(path, "jsonl", "bench")
    task_line["form"]["questions"][0]["type"] = "text"
    path.write_text(json.dumps(task_line) + "\n" + json.dumps({**item_line, "external_id": "2"}))
    with pytest.raises(ImportFailure, match="different answer form"):
        import_items(path, "jsonl", "bench")
    assert Item.objects.count() == 1 and Task.objects.get().form["questions"][0]["type"] == "boolean"
