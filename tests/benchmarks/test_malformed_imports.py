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
GOOD_PAPER = {"task": "Emotion Detection", "speaker1 personality": "shy", "speaker2 personality": "kind",
              "dialogue": [{"speaker1": "I passed!", "speaker2": "Well done!"}, {"speaker1": "Thanks."}],
              "test_question": "How does speaker1 feel?",
              "option": {"A": "Joy", "B": "Anger", "C": "Fear", "D": "Sadness"}, "label": "A", "analysis": "..."}
GOOD_RELEASED = {"task": "Emotion Classification",
                 "prompt_pretrain": "Read the following dialogue content, generate the correct answer according to the "
                                    "given question【Dialogue content】speaker1: I passed!\nspeaker2: Well done!"
                                    "【Question】How does speaker1 feel?【Answer】",
                 "prompt_SFT": "speaker1: I passed!\nspeaker2: Well done!\nBased on the content of the above dialogue, "
                               "...",
                 "choices": {"A": "Joy", "B": "Anger"}, "label": "A"}
GOOD_DIQAD_RELEASED = {"label": 1, "reason": "incomplete", "turns": "Brakes squeak?#!#Pads."}


def shaped(good, **changes):
    return json.dumps({k: v for k, v in {**good, **changes}.items() if v is not DROP}, ensure_ascii=False)


def paper(**changes):
    return shaped(GOOD_PAPER, **changes)


def released(**changes):
    return shaped(GOOD_RELEASED, **changes)


def diqad_released(**changes):
    return shaped(GOOD_DIQAD_RELEASED, **changes)


FED_OK = {"context": "User: Hi\nSystem: Hello", "response": "System: How are you?",
          "annotations": {q: [1, 1, 1, 1, 1] for q in ["Interesting", "Engaging", "Specific", "Relevant", "Correct",
                                                         "Semantically appropriate", "Understandable", "Fluent",
                                                         "Overall"]}}


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
    ("truncated_on_line_3", "dialogbench", "\n".join([db(id="a"), db(id="b"), db(id="c")[:40]]), "line 3", None,
     "invalid JSON"),
    ("options_wrong_type", "dialogbench", db(options=["Joy", "Anger"]), "line 1", "options", "expected an object"),
    ("options_missing", "dialogbench", db(options=DROP), "line 1", "options", "missing"),
    ("gold_not_among_options", "dialogbench", db(label="E"), "line 1", "label", "expected one of the option keys"),
    ("label_missing", "dialogbench", db(label=DROP), "line 1", "label", "missing"),
    ("label_wrong_type", "dialogbench", db(label=1), "line 1", "label", "expected a string"),
    ("duplicate_external_id", "dialogbench", db() + "\n" + db(), "line 2", "id", "duplicate external id"),
    ("unknown_task", "dialogbench", db(task="telepathy"), "line 1", "task", "expected one of"),
    ("dialogue_not_a_list", "dialogbench", db(dialogue="speaker1: hi"), "line 1", "dialogue", "expected a list"),
    ("turn_without_speaker", "dialogbench", db(dialogue=["no speaker here"]), "line 1", "dialogue[0]", "speaker: text"),
    ("option_keys_skip_a_letter", "dialogbench", db(options={"A": "x", "C": "y"}, label="A"), "line 1", "options",
     "expected keys"),
    ("single_option", "dialogbench", db(options={"A": "x"}, label="A"), "line 1", "options", "at least 2"),
    ("empty_option_text", "dialogbench", db(options={"A": "x", "B": " "}, label="A"), "line 1", "options.B",
     "non-empty"),
    ("line_is_an_array", "dialogbench", "[1, 2, 3]", "line 1", None, "expected a JSON object"),
    ("non_utf8_bytes", "dialogbench", db().replace("Congratulations", "F\u00e9licitations").encode("latin-1"),
     "line 1", None, "not UTF-8"),
    ("empty_file", "dialogbench", "", None, None, "empty"),
    ("blank_lines_only", "diqad", "\n\n  \n", None, None, "empty"),
    ("twenty_megabyte_line", "dialogbench", db(options={"A": "x" * 20_000_000, "B": "y"}), "line 1", None,
     "over the limit"),
    ("diqad_label_out_of_range", "diqad", diqad(label=3), "line 1", "label", "0, 1 or 2"),
    ("diqad_label_as_text", "diqad", diqad(label="2"), "line 1", "label", "expected an integer"),
    ("diqad_reasons_for_a_2", "diqad", diqad(label=2, reasons=["incomplete"]), "line 1", "reasons", "no reasons"),
    ("diqad_reason_of_other_score", "diqad", diqad(label=1, reasons=["grammatical_error"]), "line 1", "reasons",
     "expected reasons from"),
    ("diqad_turn_with_extra_keys", "diqad", diqad(dialogue=[{"speaker": "user", "text": "hi", "time": 3}]), "line 1",
     "dialogue[0]", "unexpected keys"),
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
     json.dumps({"type": "task", "slug": "t", "name": "T",
                 "form": {"primary": "zzz", "questions": [{"key": "a", "type": "boolean"}]}}),
     "line 1", "form", "primary"),
    ("jsonl_unknown_record_type", "jsonl", json.dumps({"type": "comment"}), "line 1", "type", "expected 'benchmark'"),
    # DialogBench as its paper prints an item
    ("paper_not_json_records", "dialogbench_paper", "task,option,label", "line 1", None,
     "expected a DialogBench item as printed in the paper"),
    ("paper_array_of_strings", "dialogbench_paper", json.dumps([GOOD_PAPER, "x"]), "item 1", None, "got str"),
    ("paper_truncated_array", "dialogbench_paper", json.dumps([GOOD_PAPER, GOOD_PAPER], indent=1)[:-20], "line", None,
     "invalid JSON"),
    ("paper_option_missing", "dialogbench_paper", paper(option=DROP), "line 1", "option", "missing"),
    ("paper_option_keys", "dialogbench_paper", paper(option={"A": "x", "C": "y"}), "line 1", "option", "expected keys"),
    ("paper_option_object_without_text", "dialogbench_paper", paper(option={"1": {"score": 3}, "2": "y"}, label="1"),
     "line 1", "option.1", "holding it under one of"),
    ("paper_numeric_label_out_of_range", "dialogbench_paper", paper(option={"1": "x", "2": "y"}, label="3"), "line 1",
     "label", "expected one of the option keys"),
    ("paper_middle_turn_without_speaker2", "dialogbench_paper",
     paper(dialogue=[{"speaker1": "a"}, {"speaker1": "b", "speaker2": "c"}]), "line 1", "dialogue[0].speaker2",
     "only the last turn"),
    ("paper_turn_with_a_third_speaker", "dialogbench_paper", paper(dialogue=[{"speaker1": "a", "speaker3": "b"}]),
     "line 1", "dialogue[0]", "unexpected keys"),
    ("paper_unknown_task", "dialogbench_paper", paper(task="Telepathy"), "line 1", "task", "DialogBench task name"),
    ("paper_personality_not_text", "dialogbench_paper", paper(**{"speaker1 personality": ["shy"]}), "line 1",
     "speaker1 personality", "expected a string"),
    ("paper_duplicate_id", "dialogbench_paper", paper(id="p") + "\n" + paper(id="p"), "line 2", "id", "duplicate"),
    # DialogBench as its released code reads it
    ("released_choices_missing", "dialogbench_released", released(choices=DROP), "line 1", "choices", "missing"),
    ("released_no_prompt", "dialogbench_released", released(prompt_SFT=DROP, prompt_pretrain=DROP), "line 1",
     "prompt_SFT", "needs prompt_SFT or prompt_pretrain"),
    ("released_prompt_not_text", "dialogbench_released", released(prompt_SFT=["x"]), "line 1", "prompt_SFT",
     "expected a string"),
    ("released_no_dialogue_in_prompts", "dialogbench_released",
     released(prompt_pretrain="no dialogue here", prompt_SFT="nor here"), "line 1", "prompt_pretrain",
     "expected the dialogue"),
    ("released_label_not_a_choice", "dialogbench_released", released(label="C"), "line 1", "label",
     "expected one of the option keys"),
    ("released_empty_choice", "dialogbench_released", released(choices={"A": "Joy", "B": "None"}), "line 1",
     "choices.B", "non-empty"),
    ("released_file_names_no_task", "dialogbench_released", released(task=DROP), "line 1", "--task",
     "names no DialogBench task"),
    ("released_line_is_text", "dialogbench_released", "prompt_SFT: hello", "line 1", None,
     "DialogBench record of its released code"),
    # DiQAD as released
    ("diqad_released_label_out_of_range", "diqad_released", diqad_released(label=3), "line 1", "label", "0, 1 or 2"),
    ("diqad_released_label_as_word", "diqad_released", diqad_released(label="good"), "line 1", "label", "0, 1 or 2"),
    ("diqad_released_turns_missing", "diqad_released", diqad_released(turns=DROP), "line 1", "turns", "missing"),
    ("diqad_released_turns_empty", "diqad_released", diqad_released(turns="#!# #!#"), "line 1", "turns",
     "separated by"),
    ("diqad_released_turn_not_text", "diqad_released", diqad_released(turns=["hi", 3]), "line 1", "turns[1]",
     "expected a string"),
    ("diqad_released_reason_not_text", "diqad_released", diqad_released(reason=["incomplete"]), "line 1", "reason",
     "expected a string"),
    ("diqad_released_on_line_3", "diqad_released",
     "\n".join([diqad_released(), diqad_released(), diqad_released(label=None)]), "line 3", "label", "missing"),
    ("diqad_released_csv", "diqad_released", "label,reason,turns\n2,,hi#!#there", "line 1", None,
     "DiQAD record as released"),
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
    task_line = {"type": "task", "slug": "t", "name": "T",
                 "form": {"primary": "a", "questions": [{"key": "a", "type": "boolean"}]}}
    item_line = {"type": "item", "task": "t", "external_id": "1", "dialogue": [{"speaker": "a", "text": "b"}]}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(task_line) + "\n" + json.dumps(item_line))
    import_items(path, "jsonl", "bench")
    task_line["form"]["questions"][0]["type"] = "text"
    path.write_text(json.dumps(task_line) + "\n" + json.dumps({**item_line, "external_id": "2"}))
    with pytest.raises(ImportFailure, match="different answer form"):
        import_items(path, "jsonl", "bench")
    assert Item.objects.count() == 1 and Task.objects.get().form["questions"][0]["type"] == "boolean"


@pytest.mark.django_db
def test_a_form_that_differs_only_by_its_names_in_other_languages_is_the_same_task(tmp_path):
    """A DiQAD task imported before its form named its questions and options in Chinese and Korean takes new items
    of the same format; the task keeps the form it has."""
    from benchmarks.formschema import without_names
    from benchmarks.importers.diqad import quality_form
    from tests.frontend.conftest import diqad_item, write_items

    import_items(write_items(tmp_path / "v1.jsonl", [diqad_item(1)]), "diqad", "dq")
    task = Task.objects.get()
    task.form = without_names(quality_form())
    task.save(update_fields=["form"])
    import_items(write_items(tmp_path / "v2.jsonl", [diqad_item(1), diqad_item(2)]), "diqad", "dq")
    assert Item.objects.count() == 2 and Task.objects.get().form == without_names(quality_form())
    assert "labels" in json.dumps(quality_form()) and "labels" not in json.dumps(Task.objects.get().form)
