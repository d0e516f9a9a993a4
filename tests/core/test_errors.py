"""One refusal type for every app, answered by one exception handler with the status it maps the code to."""
import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.models import EventKind
from benchmarks.importers import ImportFailure
from core.api import STATUS, http_status
from core.errors import ActionError, Code
from modeleval.actions import RunError
from modeleval.models import RunEventKind


def test_every_code_has_one_status():
    assert set(STATUS) == set(Code)
    assert all(status in (400, 403, 404, 409, 429, 503) for status in STATUS.values())


def test_an_unknown_code_or_event_kind_is_a_programming_error():
    with pytest.raises(ValueError):
        ActionError("no_such_code", "typo")
    with pytest.raises(ValueError):
        EventKind("handed-in")
    with pytest.raises(ValueError):
        RunEventKind("done")


def test_import_and_run_refusals_are_action_errors():
    failure = ImportFailure("data.jsonl", "line 3", "label", "expected one of A-D")
    assert isinstance(failure, ActionError) and failure.code == Code.INVALID_FILE
    assert failure.as_dict() == {"code": "invalid_file", "detail": "data.jsonl:line 3: field 'label': expected one of "
                                                                   "A-D"}
    assert http_status(RunError("not_active", "run 1 is finished")) == 409
    assert http_status(RunError("unknown_model", "no model")) == 400


@pytest.mark.django_db
def test_report_refusals_carry_a_code():
    user = User.objects.create_user("viewer", password="x")
    api = APIClient()
    api.force_authenticate(user)
    missing = api.get("/api/v1/reports/", {"benchmark": "nope", "campaign": 1})
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    forbidden = api.get("/api/v1/reports/", {"benchmark": "nope"})
    assert forbidden.status_code == 403 and forbidden.json()["code"] == "forbidden"


@pytest.mark.django_db
def test_drf_refusals_outside_annotation_carry_a_code():
    anonymous = APIClient().get("/api/v1/runs/")
    assert anonymous.status_code in (401, 403) and anonymous.json()["code"] in ("not_authenticated",
                                                                                 "authentication_failed")
    staff = User.objects.create_user("staff", password="x", is_staff=True)
    api = APIClient()
    api.force_authenticate(staff)
    invalid = api.post("/api/v1/runs/", {}, format="json")
    assert invalid.status_code == 400 and invalid.json()["code"] == "invalid" and "model" in invalid.json()["errors"]
