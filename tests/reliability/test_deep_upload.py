"""A JSON file nested 100,000 deep (or just deeper than 64 levels) is a bad file like any other: refused with its
file and line through the upload page and the command, nothing written; a body that deep to the API is 400 too."""
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.models import Benchmark, Item

DEEP = 100_000
GOOD = {"id": "x1", "task": "emotion_detection", "dialogue": ["speaker1: hi", "speaker2: hello"],
        "options": {"A": "Joy", "B": "Anger"}, "label": "A"}


def nested(depth, inner="1"):
    return "[" * depth + inner + "]" * depth


def files():
    """(name, bytes, line the error names)."""
    deep_field = json.dumps({**GOOD, "extra": "HOLE"}).replace('"HOLE"', nested(100))
    deeper_field = json.dumps({**GOOD, "id": "x2", "extra": "HOLE"}).replace('"HOLE"', nested(300))
    return [
        ("array.json", nested(DEEP).encode(), "line 1"),
        ("objects.json", ("[\n" + '{"a":\n' * 3 + '{"a":' * DEEP + "1" + "}" * (DEEP + 3) + "]").encode(), "line 5"),
        ("lines.jsonl", (json.dumps(GOOD) + "\n" + nested(DEEP) + "\n").encode(), "line 2"),
        ("field.jsonl", (json.dumps({**GOOD, "id": "x0"}) + "\n" + deep_field + "\n").encode(), "line 2"),
        ("field300.jsonl", (deeper_field + "\n").encode(), "line 1"),
        ("fed.json", ("[" + json.dumps({"context": "hi", "response": "yo", "annotations": "HOLE"})
                      .replace('"HOLE"', nested(DEEP, "{}")) + "]").encode(), "line 1"),
    ]


@pytest.fixture
def staff(db):
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("name, data, line", files(), ids=[case[0] for case in files()])
def test_the_upload_page_refuses_deep_json_with_its_line(staff, name, data, line):
    answer = staff.post("/manage/upload/", {"file": SimpleUploadedFile(name, data), "new_benchmark": "deep",
                                            "format": ""})
    body = answer.content.decode()
    assert answer.status_code == 400 and 'id="import-error"' in body, body[-1500:]
    assert f"{name}:{line}" in body and "nested deeper than 64 levels" in body
    assert not Benchmark.objects.filter(slug="deep").exists() and not Item.objects.exists()


# The format named, or recognised from the file (None).
FORMATS = {"array.json": None, "objects.json": None, "lines.jsonl": "dialogbench", "field.jsonl": None,
           "field300.jsonl": "dialogbench", "fed.json": "fed"}


@pytest.mark.django_db
@pytest.mark.parametrize("name, data, line", files(), ids=[case[0] for case in files()])
def test_the_command_refuses_deep_json_with_its_line(tmp_path, name, data, line):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(CommandError) as refused:
        call_command("import_items", str(path), format=FORMATS[name], benchmark="deep")
    message = str(refused.value)
    assert f"{path}:{line}" in message and "nested deeper than 64 levels" in message, message
    assert not Item.objects.exists()


@pytest.mark.django_db
def test_the_api_refuses_a_body_that_deep(staff):
    for body in (nested(DEEP), '{"name": ' + nested(DEEP) + "}"):
        answer = staff.post("/api/v1/campaigns/", body, content_type="application/json")
        assert answer.status_code == 400 and answer.json()["code"] == "too_deep", answer.content
