"""What an import says and stores: where a truncated record ends, no doubled word in a JSON message, the language
of each item read from its text by the one rule, a DialogBench file of one task named by the person (command line
and upload page), and no empty metadata shown."""
import io
import json

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from benchmarks.actions import import_items
from benchmarks.importers import FORMATS, ImportFailure, base
from benchmarks.importers.base import language_of_text
from benchmarks.models import Item, Task, shown_meta

from .test_malformed_imports import db, fed_with
from .test_published_shapes import released_record


def failure(tmp_path, name, content, format_name, **kwargs):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportFailure) as caught:
        import_items(path, format_name, "broken", **kwargs)
    return caught.value


def test_a_truncated_json_lines_record_is_reported_where_it_ends(tmp_path):
    cut = db(id="c")[:40]
    error = failure(tmp_path, "cut.jsonl", "\n".join([db(id="a"), db(id="b"), cut]) + "\n", "dialogbench")
    assert error.location == "line 3"
    assert "the record ends at line 3, column 40, before it is complete" in error.expected
    assert "column 1)" not in str(error)


def test_a_truncated_json_file_is_reported_where_it_ends(tmp_path):
    text = fed_with()[:-30]
    error = failure(tmp_path, "fed.json", text, "fed")
    last = text.rstrip().split("\n")
    assert error.location == f"line {len(last)}"
    assert f"ends at line {len(last)}, column {len(last[-1])}" in error.expected


def test_a_json_message_that_names_its_own_place_gets_no_second_at(tmp_path, monkeypatch):
    def loads(text):
        raise orjson.JSONDecodeError("Unterminated string starting at", "[{\"context\": \"x}]", 13)

    monkeypatch.setattr(base.orjson, "loads", loads)
    error = failure(tmp_path, "fed.json", '[{"context": "x}]', "fed")
    assert "starting at column 14" in error.expected and "at at" not in str(error)


@pytest.mark.parametrize("text,language", [
    ("我的车刹车有异响怎么办？", "zh"), ("My brakes squeak, what should I do?", "en"),
    ("브레이크에서 소리가 나요. 어떻게 하죠?", "ko"), ("ABS灯亮了怎么办？需要去4S店吗？", "zh"),
    ("Is the BMW 宝马 dealer open today?", "en"), ("1234 ?!", "en")])
def test_language_is_read_from_the_script(text, language):
    assert language_of_text(text) == language


@pytest.mark.django_db
def test_released_diqad_items_carry_the_language_of_their_text(tmp_path):
    lines = [{"label": 2, "reason": "", "turns": "我的车刹车有异响怎么办？#!#可能是刹车片磨损了。"},
             {"label": 2, "reason": "", "turns": "My brakes squeak.#!#The pads may be worn."},
             {"label": 1, "reason": "incomplete", "turns": "브레이크에서 소리가 나요.#!#패드를 확인하세요."}]
    path = tmp_path / "released.json"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), encoding="utf-8")
    import_items(path, "diqad_released", "dq-mixed")
    assert [item.meta["language"] for item in Item.objects.order_by("external_id")] == ["zh", "en", "ko"]


def released_file(tmp_path, name):
    dialogue = "speaker1: I lost my keys again.\nspeaker2: Did you check your coat?"
    record = released_record("Emotion Classification", "en", dialogue, "How does speaker1 feel?",
                             {"A": "Frustration", "B": "Joy", "C": "Pride", "D": "Relief"}, "A")
    path = tmp_path / name
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


@pytest.mark.django_db
def test_a_released_dialogbench_file_not_named_after_its_task_is_given_one(tmp_path):
    path = released_file(tmp_path, "my_export.json")
    with pytest.raises(ImportFailure) as caught:
        import_items(path, None, "db-named")
    assert caught.value.field == "--task" and "name the task" in caught.value.expected
    assert "missing" not in caught.value.expected  # the format has no task field to miss
    out = io.StringIO()
    call_command("import_items", str(path), "--benchmark", "db-named", "--task", "Emotion Classification", stdout=out)
    assert "1 items created" in out.getvalue()
    assert Task.objects.get(benchmark__slug="db-named").slug == "emotion_detection"
    with pytest.raises(ImportFailure, match="expected a DialogBench task name"):
        import_items(path, None, "db-other", task="Feelings")
    with pytest.raises(ImportFailure, match="names its own tasks"):
        import_items(tmp_path / "my_export.json", "dialogbench", "db-other", task="Emotion Classification")


def test_empty_metadata_is_not_shown():
    assert shown_meta(Item(meta={"domain": "", "language": "zh", "personality": {}})) == {"language": "zh"}
    assert shown_meta(Item(meta={"domain": "legal", "source": "x"})) == {"domain": "legal"}


@pytest.mark.django_db
def test_the_upload_page_lists_every_format_its_menu_offers_and_names_a_task(client, tmp_path):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("boss", is_staff=True))
    page = client.get("/manage/upload/").content.decode()
    for name in FORMATS:
        assert f'<option value="{name}">' in page and f'<tr data-format="{name}">' in page, name
    assert "<code>prompt_pretrain, prompt_SFT, choices, label</code>" in page
    path = released_file(tmp_path, "export.json")
    response = client.post("/manage/upload/", {"file": SimpleUploadedFile("export.json", path.read_bytes()),
                                               "new_benchmark": "db-up", "format": "", "task": "Emotion Detection"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Item.objects.filter(task__benchmark__slug="db-up", task__slug="emotion_detection").count() == 1
