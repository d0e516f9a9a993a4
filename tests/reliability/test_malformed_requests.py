"""Malformed input answers 400 with a code, never 500, signed in or not (issue 18, finding 12)."""
import pytest
from django.test import Client

TOKEN = "/api/v1/auth/token/"


pytestmark = pytest.mark.usefixtures("empty_cache")


def coded_400(response):
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response.json().get("code"), response.content[:300]


@pytest.mark.django_db
@pytest.mark.parametrize("body", ["[]", '"x"', "1", "null", '{"username": ["a"], "password": "x"}',
                                  '{"username": {"a": 1}, "password": "x"}'])
def test_token_endpoint_refuses_bodies_that_are_not_credentials(body):
    coded_400(Client().post(TOKEN, body, content_type="application/json"))


@pytest.mark.django_db
@pytest.mark.parametrize("body", ['{"username": "\\ud800", "password": "x"}',
                                  '{"username": "a", "password": "\\udfff"}',
                                  '{"username": "a", "password": "x", "\\ud83d": 1}'])
def test_lone_surrogates_are_refused(body):
    coded_400(Client().post(TOKEN, body, content_type="application/json"))


@pytest.mark.django_db
@pytest.mark.parametrize("depth", [200, 100000])
def test_deeply_nested_json_is_refused(world, depth):
    coded_400(Client().post(TOKEN, "[" * depth + "]" * depth, content_type="application/json"))
    staff = Client()
    staff.force_login(world.users["staff"])
    coded_400(staff.post("/api/v1/campaigns/", '{"name": ' + "[" * depth + "]" * depth + "}",
                         content_type="application/json"))


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["²", "٣x", "1e3", "-1", "abc"])
def test_number_parameters_that_are_not_numbers(world, value):
    staff = Client()
    staff.force_login(world.users["staff"])
    coded_400(staff.get(f"/api/v1/campaigns/{world.campaign.pk}/baseline/", {"gold_version": value}))
    coded_400(staff.get("/api/v1/reports/", {"benchmark": "diqad-demo", "campaign": value}))
    coded_400(staff.get("/api/v1/reports/", {"benchmark": "diqad-demo", "gold_version": value}))
    for page in ("/reports/diqad-demo/", "/reports/diqad-demo/embed/"):
        answer = staff.get(page, {"campaign": value})
        assert answer.status_code == 400 and b"invalid_campaign" in answer.content, (page, answer.status_code)


@pytest.mark.django_db
def test_report_of_a_benchmark_without_items(world):
    from benchmarks.models import Benchmark

    Benchmark.objects.create(slug="empty", name="Nothing imported yet")
    staff = Client()
    staff.force_login(world.users["staff"])
    for fmt in ("json", "csv"):
        answer = staff.get("/api/v1/reports/", {"benchmark": "empty", "format": fmt})
        assert answer.status_code == 200, (fmt, answer.status_code)
