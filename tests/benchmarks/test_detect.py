"""The format of an uploaded file, recognised from its first record."""
import json

import pytest

from benchmarks.importers import ImportFailure
from benchmarks.importers.detect import guess_format
from tests.conftest import DEMO_DATA


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name, expected", [("dialogbench_sample.jsonl", "dialogbench"),
                                            ("diqad_sample.jsonl", "diqad")])
def test_demo_files(name, expected):
    assert guess_format(DEMO_DATA / name) == expected


def test_every_shape(tmp_path):
    assert guess_format(write(tmp_path / "a.json", '\ufeff  [{"context": "A: hi"}]')) == "fed"
    assert guess_format(write(tmp_path / "b.jsonl", json.dumps({"id": "m", "utterances": ["a", "b"]}))) == "mutual"
    assert guess_format(write(tmp_path / "c.jsonl", json.dumps({"type": "benchmark", "name": "x"}) + "\n")) == "jsonl"


def test_unrecognised_files_name_the_upload(tmp_path):
    with pytest.raises(ImportFailure) as error:
        guess_format(write(tmp_path / "x.jsonl", '{"foo": 1}\n'), "mine.jsonl")
    assert str(error.value).startswith("mine.jsonl:line 1:") and "choose the format" in str(error.value)
    with pytest.raises(ImportFailure, match="invalid JSON"):
        guess_format(write(tmp_path / "y.jsonl", "{not json\n"))
    with pytest.raises(ImportFailure, match="empty"):
        guess_format(write(tmp_path / "z.jsonl", "  \n"))
