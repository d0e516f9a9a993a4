"""Property-based requests from the OpenAPI schema (/api/schema/) against the WSGI app, signed in as staff
(who may call every operation): no request, however odd, gets a 5xx.

Nothing is excluded, but NUL bytes are not generated: PostgreSQL refuses them in text, and the places that
pass one to a query are pinned down by `test_nul_byte_is_refused` below instead. Examples per operation are bounded
so the whole schema runs in a couple of minutes.
All operations run in one test over one shared world (conftest), so path ids such as 1 name real objects;
the operations are walked here rather than with schemathesis' pytest plugin, which builds one test per
operation (the world once per operation) and does not run under this pytest.
"""
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.wsgi import application

EXAMPLES = 12


@pytest.fixture
def keep_connection():
    # The WSGI app would close the test's connection (inside its transaction) after every request;
    # Django's own test client keeps it open the same way.
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


def server_errors(operation, headers):
    found = []

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def call(case):
        response = case.call(headers=headers)
        if response.status_code >= 500 and len(found) < 3:
            found.append(f"{response.status_code}: {case.as_curl_command(headers=headers)}\n{response.text[:300]}")

    call()
    return found


@pytest.mark.slow
@pytest.mark.django_db
def test_no_server_errors(world, keep_connection):
    headers = {"Authorization": f"Token {Token.objects.create(user=world.users['staff']).key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application, headers=headers)  # for signed-in people
    schema.config.generation.update(allow_x00=False)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 50
    errors = [error for operation in operations for error in server_errors(operation, headers)]
    assert not errors, "\n\n".join(errors)


NUL_BODIES = [
    ("/api/v1/runs/", {"model": "tiny\x00", "benchmark": "diqad-demo"}),
    ("/api/v1/tasks/", {"benchmark": "diqad\x00", "slug": "t", "name": "t", "form": {}}),
    ("/api/v1/memberships/", {"campaign": 1, "user": "user\x00", "role": "viewer"}),
    ("/api/v1/campaigns/", {"name": "c", "benchmark": "diqad\x00", "protocol": "production"}),
]


# DRF's SlugRelatedField has no NUL check (CharField has): without the parsers in config/parsers.py the
# lookup would reach PostgreSQL and answer 500.
@pytest.mark.django_db
@pytest.mark.parametrize("url, body", NUL_BODIES, ids=[url for url, _ in NUL_BODIES])
def test_nul_byte_is_refused(world, url, body):
    """A slug with a NUL byte is looked up in PostgreSQL as is, unless the field refuses it first."""
    client = APIClient()
    client.raise_request_exception = False
    client.force_authenticate(world.users["staff"])
    response = client.post(url, body, format="json")
    assert response.status_code == 400 and "NUL" in response.json()["detail"]
