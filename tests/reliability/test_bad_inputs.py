"""The bad-input corpus: each file (and generated payload) is refused with its expected clear error,
and nothing is written."""
import json
from pathlib import Path

import pytest

from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure
from benchmarks.models import Benchmark, Item, Task

CORPUS = Path(__file__).parent / "bad_inputs"
MANIFEST = json.loads((CORPUS / "cases.json").read_text())


def assert_refused(path, case):
    with pytest.raises(ImportFailure) as caught:
        import_items(path, case["format"], "bad-input")
    message = str(caught.value)
    assert str(path) in message
    if case["location"]:
        assert case["location"] in message, message
    if case["field"]:
        assert caught.value.field == case["field"], message
    assert case["words"] in message, message
    assert (Benchmark.objects.count(), Task.objects.count(), Item.objects.count()) == (0, 0, 0)


def test_corpus_is_large_enough():
    assert len(MANIFEST["files"]) + len(MANIFEST["generated"]) >= 30
    assert all((CORPUS / case["file"]).is_file() for case in MANIFEST["files"])


@pytest.mark.django_db
@pytest.mark.parametrize("case", MANIFEST["files"], ids=[c["file"] for c in MANIFEST["files"]])
def test_bad_import_file(case):
    assert_refused(CORPUS / case["file"], case)


@pytest.mark.django_db
@pytest.mark.parametrize("case", MANIFEST["generated"], ids=[c["name"] for c in MANIFEST["generated"]])
def test_generated_bad_import(case, tmp_path):
    path = tmp_path / f"{case['name']}.jsonl"
    record = {"id": "big", "task": "emotion_detection", "dialogue": ["speaker1: hi"],
              "options": {"A": "x" * case["bytes"], "B": "y"}, "label": "A"}
    path.write_text(json.dumps(record))
    assert_refused(path, case)
