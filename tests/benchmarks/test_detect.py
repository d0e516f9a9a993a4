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
