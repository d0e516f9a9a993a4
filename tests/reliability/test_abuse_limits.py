"""Limits that keep one client from taking the server: page size, body size, report generation per user;
CSV exports that cannot run formulas; prompt templates that cannot blow up (issue 18, findings 7, 8, 13, 15)."""
import json

import pytest
from django.core.cache import cache
from django.test import Client

from modeleval import actions as run_actions
from modeleval.models import EvalRun, ModelSpec
from reports.render import csv as csv_render
from tests.modeleval.conftest import demo_benchmark  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("empty_cache")


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


# ---------------------------------------------------------------- finding 7: page and body size

@pytest.mark.django_db
def test_no_list_serves_more_than_the_page_cap(world, settings):
    settings.MAX_PAGE_SIZE = 2
    staff = signed_in(world.users["staff"])
    for url in ("/api/v1/items/", "/api/v1/tasks/", "/api/v1/annotations/", "/api/v1/assignments/",
                f"/api/v1/batches/{world.pks['batch']}/items/", "/api/v1/batches/"):
        answer = staff.get(url, {"limit": 100000000})
        assert answer.status_code == 200, (url, answer.status_code)
        assert len(answer.json()["results"]) <= 2, url
    items = staff.get("/api/v1/items/", {"limit": 100000000}).json()
    assert items["count"] > 2 and len(items["results"]) == 2 and items["next"]


@pytest.mark.django_db
def test_bodies_over_the_cap_are_refused_before_they_are_read(world, settings):
    settings.MAX_BODY_BYTES = 1000
    staff = signed_in(world.users["staff"])
    big = json.dumps({"name": "x" * 2000, "benchmark": "diqad-demo", "protocol": "production"})
    answer = staff.post("/api/v1/campaigns/", big, content_type="application/json")
    assert answer.status_code == 413 and answer.json()["code"] == "body_too_large"
    assert Client().post("/api/v1/auth/token/", big, content_type="application/json").status_code == 413
    assert Client().post("/accounts/login/", {"username": "x" * 2000, "password": "y"}).status_code == 413


# ---------------------------------------------------------------- finding 8: report generation

REPORT = "/api/v1/reports/?benchmark=diqad-demo"


@pytest.mark.django_db
def test_reports_per_user_are_limited_in_rate(world, settings):
    settings.REPORT_RATE = "2/min"
    staff, other = signed_in(world.users["staff"]), signed_in(world.users["researcher"])
    assert [staff.get(REPORT).status_code for _ in range(2)] == [200, 200]
    refused = staff.get(REPORT)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert refused.json()["code"] == "too_many_reports"
    embed = staff.get("/reports/diqad-demo/embed/")
    assert embed.status_code == 429 and int(embed["Retry-After"]) > 0
    assert other.get(REPORT).status_code == 200  # another user is not held back


@pytest.mark.django_db
def test_reports_per_user_are_limited_in_concurrency(world, settings):
    settings.REPORT_CONCURRENCY_PER_USER = 1
    staff = world.users["staff"]
    cache.set(f"reports-running:{staff.pk}", 1, 600)  # one of staff's reports is being computed
    for url in (REPORT, "/reports/diqad-demo/embed/"):
        busy = signed_in(staff).get(url)
        assert busy.status_code == 429 and int(busy["Retry-After"]) > 0, url
    assert signed_in(world.users["researcher"]).get(REPORT).status_code == 200
    cache.set(f"reports-running:{staff.pk}", 0, 600)  # done
    assert signed_in(staff).get(REPORT).status_code == 200
    assert cache.get(f"reports-running:{staff.pk}") == 0  # the slot was given back


# ---------------------------------------------------------------- finding 13: CSV formulas

def test_csv_cells_cannot_run_formulas(monkeypatch):
    row = {"section": "annotators", "task": "=HYPERLINK(\"http://x\",\"y\")", "question": "+cmd", "model": "@SUM(A1)",
           "subset": "-2+3", "metric": "\tx", "value": -0.25, "undefined_reason": "=1"}
    numbers = {"section": "annotators", "task": "t", "question": "-1", "model": "-1.5e3", "subset": "+2",
               "metric": "m", "value": -3, "undefined_reason": ""}
    monkeypatch.setattr(csv_render, "rows", lambda report: iter([row, numbers]))
    lines = csv_render.render_csv({}).splitlines()
    assert lines[1] == "annotators,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",'+cmd,'@SUM(A1),'-2+3,'\tx,-0.25,'=1,,"
    assert lines[2] == "annotators,t,-1,-1.5e3,+2,m,-3,,,"


# ---------------------------------------------------------------- finding 15: prompt templates

@pytest.mark.django_db
@pytest.mark.parametrize("template", ["{dialogue:>2000000000}", "{dialogue!r}", "{dialogue.__class__}",
                                      "{options[0]}", "{}", "{0}", "{secret}", "{dialogue:{question}}", "{dialogue"])
def test_unsafe_prompt_templates_are_refused(demo_benchmark, template):  # noqa: F811
    model = ModelSpec.objects.create(name="tiny", sha256="0" * 64)
    with pytest.raises(run_actions.RunError) as refused:
        run_actions.start_run(model=model, benchmark=demo_benchmark, prompt_template=template, enqueue=False)
    assert refused.value.code == "bad_template"
    assert not EvalRun.objects.exists()


@pytest.mark.django_db
def test_known_fields_and_literal_braces_are_accepted(demo_benchmark):  # noqa: F811
    model = ModelSpec.objects.create(name="tiny", sha256="0" * 64)
    run = run_actions.start_run(model=model, benchmark=demo_benchmark, enqueue=False,
                                prompt_template="{{json}} {instruction}\n{dialogue}{extras}\n{question}\nAnswer:")
    assert run.prompt_version == "custom"


@pytest.mark.django_db
def test_chat_templates_are_checked(db):
    with pytest.raises(run_actions.RunError) as refused:
        run_actions.register_model("broken", chat_template="{% for m in messages %}{{ m }}")
    assert refused.value.code == "bad_template"
    assert not ModelSpec.objects.filter(name="broken").exists()
