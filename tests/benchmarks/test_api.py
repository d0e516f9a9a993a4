import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from benchmarks.actions import import_items
from tests.conftest import DEMO_DATA


@pytest.fixture
def demo_items(db):
    import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "db-demo")


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.django_db
def test_anonymous_is_refused(demo_items):
    assert APIClient().get("/api/v1/items/").status_code in (401, 403)


@pytest.mark.django_db
def test_signed_in_user_without_a_role_reads_no_items(demo_items):
    """Items are read by staff, researchers and the reading roles of a campaign on them (tests/reliability)."""
    user = User.objects.create_user("ann", password="x")
    response = client_for(user).get("/api/v1/items/", {"benchmark": "db-demo", "limit": 50})
    assert response.status_code == 200 and response.json()["count"] == 0
    assert client_for(user).get("/api/v1/benchmarks/").json()["count"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["staff", "researcher"])
def test_staff_and_researchers_see_gold(demo_items, kind):
    user = User.objects.create_user(kind, password="x", is_staff=kind == "staff")
    if kind == "researcher":
        user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    item = client_for(user).get("/api/v1/items/", {"external_id": "db-en-ed-001"}).json()["results"][0]
    assert item["source_gold"] == {"answer": "B"}


@pytest.mark.django_db
def test_token_authentication_and_write_needs_staff(demo_items):
    user = User.objects.create_user("ann", password="x")
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/v1/benchmarks/").status_code == 200
    assert client.post("/api/v1/benchmarks/", {"slug": "new", "name": "New"}, format="json").status_code == 403
    staff = User.objects.create_user("boss", password="x", is_staff=True)
    created = client_for(staff).post("/api/v1/benchmarks/", {"slug": "new", "name": "New"}, format="json")
    assert created.status_code == 201


@pytest.mark.django_db
def test_task_with_bad_form_is_refused_by_the_api(demo_items):
    staff = User.objects.create_user("boss", password="x", is_staff=True)
    response = client_for(staff).post("/api/v1/tasks/", {"benchmark": "db-demo", "slug": "t", "name": "T",
                                                         "form": {"primary": "nope", "questions": []}}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid" and "form" in response.json()["errors"]


@pytest.mark.django_db
def test_openapi_schema_lists_the_endpoints(client):
    client.force_login(User.objects.create_user("reader"))
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert {"/api/v1/benchmarks/", "/api/v1/tasks/", "/api/v1/items/"} <= set(paths)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/", "/api/redoc/", "/api/docs/?script="])
def test_the_schema_and_its_docs_are_for_signed_in_people(client, url):
    refused = client.get(url)
    assert refused.status_code in (401, 403) and "/api/v1/items/" not in refused.content.decode(), url
    client.force_login(User.objects.create_user("reader"))
    assert client.get(url).status_code == 200, url
