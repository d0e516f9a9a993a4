"""The format of an uploaded file, recognised from its first record; errors name the upload, not the temp path."""
import json

import pytest
from django.contrib.auth.models import User

from benchmarks.actions import import_upload
from benchmarks.importers import ImportFailure, detect
from benchmarks.models import Item
from tests.conftest import DEMO_DATA


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name, expected", [("dialogbench_sample.jsonl", "dialogbench"),
                                            ("diqad_sample.jsonl", "diqad")])
def test_demo_files(name, expected):
    assert detect(DEMO_DATA / name) == expected


def test_every_shape(tmp_path):
    assert detect(write(tmp_path / "a.json", '\ufeff  [{"context": "A: hi", "annotations": {}}]')) == "fed"
    assert detect(write(tmp_path / "b.jsonl", json.dumps({"id": "m", "utterances": ["a", "b"]}))) == "mutual"
    assert detect(write(tmp_path / "c.jsonl", json.dumps({"type": "benchmark", "name": "x"}) + "\n")) == "jsonl"


@pytest.mark.django_db
def test_unrecognised_uploads_name_the_upload(tmp_path):
    staff = User.objects.create_user("boss", is_staff=True)
    with pytest.raises(ImportFailure) as error:
        import_upload(write(tmp_path / "x.jsonl", '{"foo": 1}\n'), actor=staff, benchmark_slug="b", name="mine.jsonl")
    assert str(error.value).startswith("mine.jsonl:line 1:") and "cannot tell the format" in str(error.value)
    with pytest.raises(ImportFailure, match="invalid JSON"):
        detect(write(tmp_path / "y.jsonl", "{not json\n"))
    with pytest.raises(ImportFailure, match="empty"):
        detect(write(tmp_path / "z.jsonl", "  \n"))
    assert not Item.objects.exists()


@pytest.mark.django_db
def test_diqad_items_keep_the_language_of_their_text(tmp_path):
    """A DiQAD-shaped file's items are not all taken for Chinese: each has its text's language (or its own)."""
    import json

    from benchmarks.actions import import_items
    from benchmarks.importers.base import language_of_text
    from benchmarks.models import Item

    records = [{"id": "zh", "dialogue": ["user: 请问离婚需要什么手续？", "expert: 需要双方到民政局办理。"], "label": 2},
               {"id": "en", "dialogue": ["user: How do I file for divorce?", "expert: Both go to the registry."],
                "label": 2},
               {"id": "ko", "dialogue": ["user: 이혼하려면 뭐가 필요해요?", "expert: 두 분이 구청에 가세요."],
                "label": 2},
               {"id": "own", "dialogue": ["user: Hello", "expert: Hi"], "label": 2, "language": "zh"}]
    path = tmp_path / "dq.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    import_items(path, "diqad", "dq")
    assert dict(Item.objects.values_list("external_id", "meta__language")) == {"zh": "zh", "en": "en", "ko": "ko",
                                                                               "own": "zh"}
    assert [language_of_text(t) for t in ("東京へ行きます", "你好", "hi", "")] == ["ja", "zh", "en", "en"]
