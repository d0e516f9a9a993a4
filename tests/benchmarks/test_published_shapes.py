"""The studies' own published files import as they are, their format detected from the first record.

Each file is written here from the published shape: DialogBench as its paper's generation prompts
print an item, DialogBench as its released evaluation code (kwai/DialogBench src/evaluate.py) reads
a task's file, DiQAD as its release's README describes a line.
"""
import io
import json

import pytest
from django.core.management import call_command

from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure, detect
from benchmarks.models import Benchmark, Item, Task
from studies.dialogbench.recipe import PROMPTS, option_str

PAPER_ITEMS = [
    {"task": "Emotion Classification", "domain": "daily life",
     "speaker1 personality": "cheerful and talkative", "speaker2 personality": "calm and caring",
     "dialogue": [{"speaker1": "I finally passed my driving test!", "speaker2": "That is wonderful news."},
                  {"speaker1": "I failed it twice before, so I was so nervous.", "speaker2": "Nerves are normal."},
                  {"speaker1": "Now I can drive to work every day."}],
     "test_question": "What is speaker1's emotion?",
     "option": {"1": "Joy", "2": "Anger", "3": {"text": "Fear"}, "4": {"answer": "Sadness"}},
     "label": "1", "analysis": "speaker1 is happy about passing.", "emotions": ["joy"]},
    {"task": "Dialogue Natural Language Inference", "id": "nli-7",
     "speaker1 personality": "curious", "speaker2 personality": "patient",
     "dialogue": [{"speaker1": "Is the museum open on Mondays?", "speaker2": "No, it closes on Mondays."}],
     "premise": "The museum closes on Mondays.", "hypothesis": "The museum is open every day.",
     "option": {"A": "entailment", "B": "contradiction", "C": "neutral"}, "label": "B",
     "analysis": "The hypothesis contradicts speaker2."},
]


@pytest.mark.django_db
@pytest.mark.parametrize("layout", ["array", "lines"])
def test_dialogbench_as_printed_in_the_paper(tmp_path, layout):
    path = tmp_path / "generated.json"
    text = (json.dumps(PAPER_ITEMS, ensure_ascii=False, indent=2) if layout == "array"
            else "\n".join(json.dumps(item, ensure_ascii=False) for item in PAPER_ITEMS))
    path.write_text(text, encoding="utf-8")
    assert detect(path) == "dialogbench_paper"
    summary = import_items(path, None, "db-paper")
    assert (summary.tasks_created, summary.items_created) == (2, 2)
    assert Benchmark.objects.get().language == "en"

    emotion = Item.objects.get(task__slug="emotion_detection")
    assert emotion.external_id == ("generated-0" if layout == "array" else "generated-1")
    assert emotion.dialogue == [
        {"speaker": "speaker1", "text": "I finally passed my driving test!"},
        {"speaker": "speaker2", "text": "That is wonderful news."},
        {"speaker": "speaker1", "text": "I failed it twice before, so I was so nervous."},
        {"speaker": "speaker2", "text": "Nerves are normal."},
        {"speaker": "speaker1", "text": "Now I can drive to work every day."},
    ]
    assert emotion.fields == {"options": {"A": "Joy", "B": "Anger", "C": "Fear", "D": "Sadness"},
                              "test_question": "What is speaker1's emotion?", "emotions": ["joy"]}
    assert emotion.source_gold == {"answer": "A"}
    assert emotion.meta["personality"] == {"speaker1": "cheerful and talkative", "speaker2": "calm and caring"}
    assert emotion.meta["analysis"] == "speaker1 is happy about passing."

    nli = Item.objects.get(external_id="nli-7")
    assert nli.task.slug == "dialogue_nli" and nli.source_gold == {"answer": "B"}
    assert nli.fields["premise"] == "The museum closes on Mondays." and len(nli.fields["options"]) == 3
    # Importing the same file again adds nothing.
    assert import_items(path, None, "db-paper").items_unchanged == 2


def released_record(task, language, dialogue, question, options, label, **extra):
    """A line of a released DialogBench file, its prompts filled in from config/prompt.json."""
    suffix = " En" if language == "en" else ""
    values = {"option_str": option_str(options), "dialogue_content": dialogue, "test_question": question, **extra}
    return {"prompt_pretrain": PROMPTS[f"{task} Pretrain{suffix}"].format(**values),
            "prompt_SFT": dialogue + "\n" + PROMPTS[f"{task}{suffix}"].format(**values),
            "choices": options, "label": label}


@pytest.mark.django_db
def test_dialogbench_as_its_released_code_reads_it(tmp_path):
    english = tmp_path / "Emotion_Classification.json"
    dialogue = "speaker1: I lost my keys again.\nspeaker2: Did you check your coat?"
    options = {"A": "Frustration", "B": "Joy", "C": "Pride", "D": "Relief"}
    records = [released_record("Emotion Classification", "en", dialogue, "How does speaker1 feel?", options, "A"),
               {**released_record("Emotion Classification", "en", dialogue, "How does speaker2 feel?", options, "D"),
                "id": "ec-2", "domain": "daily life"}]
    english.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    chinese = tmp_path / "nli_premise.json"
    zh_dialogue = "speaker1：你明天去图书馆吗？\nspeaker2：不去，我要加班。"
    zh_options = {"A": "蕴含", "B": "矛盾", "C": "中立"}
    chinese.write_text(json.dumps(released_record("Dialogue NLI", "zh", zh_dialogue, "", zh_options, "B",
                                                  hypothesis="speaker2明天去图书馆。"), ensure_ascii=False),
                       encoding="utf-8")

    assert detect(english) == detect(chinese) == "dialogbench_released"
    out = io.StringIO()
    call_command("import_items", str(english), "--benchmark", "db-released", stdout=out)  # no --format
    assert "1 tasks and 2 items created" in out.getvalue()
    assert import_items(chinese, "dialogbench_released", "db-released-zh").items_created == 1

    first = Item.objects.get(external_id="Emotion_Classification-1")
    assert first.task.slug == "emotion_detection" and first.source_gold == {"answer": "A"}
    assert first.fields["prompt_SFT"] == records[0]["prompt_SFT"]  # kept as the item's prompts
    assert first.fields["prompt_pretrain"] == records[0]["prompt_pretrain"]
    assert first.fields["options"] == options
    assert first.dialogue == [{"speaker": "speaker1", "text": "I lost my keys again."},
                              {"speaker": "speaker2", "text": "Did you check your coat?"}]
    assert first.meta["language"] == "en" and Item.objects.get(external_id="ec-2").meta["domain"] == "daily life"

    zh = Item.objects.get(task__benchmark__slug="db-released-zh")
    assert zh.task.slug == "dialogue_nli" and zh.meta["language"] == "zh"
    assert zh.dialogue == [{"speaker": "speaker1", "text": "你明天去图书馆吗？"},
                           {"speaker": "speaker2", "text": "不去，我要加班。"}]
    assert Benchmark.objects.get(slug="db-released-zh").language == "zh"


@pytest.mark.django_db
def test_released_numeric_choices_and_the_dialogue_from_the_sft_prompt(tmp_path):
    path = tmp_path / "Offensive_Detection.jsonl"
    record = {"prompt_SFT": "A: you are useless\nB: please calm down\n" + PROMPTS["Offensive Detection En"].format(
        option_str="A. yes B. no"), "choices": {"1": "yes", "2": "no"}, "label": "1"}
    path.write_text(json.dumps(record))
    import_items(path, None, "db-od")
    item = Item.objects.get()
    assert item.task.slug == "offensive_detection" and item.source_gold == {"answer": "A"}
    assert item.fields["options"] == {"A": "yes", "B": "no"} and "prompt_pretrain" not in item.fields
    assert [t["speaker"] for t in item.dialogue] == ["A", "B"]


DIQAD_LINES = [
    {"label": 2, "reason": "",
     "turns": "我的车刹车有异响怎么办？#!#可能是刹车片磨损了，建议去4S店检查。#!#大概要多少钱？#!#一般两三百元。"},
    {"label": 1, "reason": "less informative", "turns": "孩子发烧了怎么办？#!#多喝水。"},
    {"label": 0, "reason": "not_relevant#!#grammatical_error", "turns": "合同违约怎么赔？#!#今天天气不错。"},
    {"label": 0, "reason": "答非所问", "turns": "能退货吗？#!#你好"},
]


@pytest.mark.django_db
def test_diqad_as_released(tmp_path):
    path = tmp_path / "final_labelled_data_110k_part_A.json"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in DIQAD_LINES), encoding="utf-8")
    assert detect(path) == "diqad_released"
    summary = import_items(path, None, "diqad-released")
    assert (summary.tasks_created, summary.items_created) == (1, 4)
    assert Task.objects.get().slug == "diqad-quality"
    items = {item.external_id: item for item in Item.objects.all()}
    first = items["final_labelled_data_110k_part_A-1"]
    assert first.dialogue == [{"speaker": "user", "text": "我的车刹车有异响怎么办？"},
                              {"speaker": "expert", "text": "可能是刹车片磨损了，建议去4S店检查。"},
                              {"speaker": "user", "text": "大概要多少钱？"},
                              {"speaker": "expert", "text": "一般两三百元。"}]
    assert first.source_gold == {"score": 2}
    assert items["final_labelled_data_110k_part_A-2"].source_gold == {"score": 1, "reasons_1": ["less_informative"]}
    assert items["final_labelled_data_110k_part_A-3"].source_gold == {
        "score": 0, "reasons_0": ["not_relevant", "grammatical_error"]}
    # A reason in words of its own stays as given, beside the score.
    fourth = items["final_labelled_data_110k_part_A-4"]
    assert fourth.source_gold == {"score": 0} and fourth.meta["reason"] == "答非所问"


@pytest.mark.django_db
def test_a_shape_no_importer_knows_is_named_with_the_shapes_expected(tmp_path):
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"question": "?", "answer": "!"}))
    with pytest.raises(ImportFailure) as caught:
        import_items(path, None, "odd")
    message = str(caught.value)
    assert "line 1" in message and "['answer', 'question']" in message
    assert "prompt_SFT" in message and "turns" in message and "--format" in message
    csv = tmp_path / "odd.csv"
    csv.write_text("label,turns\n2,hello")
    with pytest.raises(ImportFailure, match="JSON array of objects or one JSON object per line"):
        import_items(csv, None, "odd")
    assert Item.objects.count() == Benchmark.objects.count() == 0


@pytest.mark.parametrize("fixture,expected", [("demo/dialogbench_sample.jsonl", "dialogbench"),
                                              ("demo/diqad_sample.jsonl", "diqad"),
                                              ("shared/fed/fed_data.json", "fed"),
                                              ("shared/botchat/mutual_test.jsonl", "mutual")])
def test_the_other_shapes_are_still_detected(fixture, expected):
    from tests.conftest import DEMO_DATA, SHARED_DATA

    where, name = fixture.split("/", 1)
    path = (DEMO_DATA if where == "demo" else SHARED_DATA) / name
    if not path.exists():
        pytest.skip(f"no {fixture} in the demo data")
    assert detect(path) == expected
