"""The PostgreSQL backend's health check (core/postgresql/base.py): no statement while the connection is healthy,
and a connection the server has ended is replaced before the request's first statement fails on it."""
import time

import pytest
from django.db import connection, connections


@pytest.fixture
def own_connection():
    if connection.vendor != "postgresql":
        print("skipping: the health check under test is PostgreSQL's (DATABASE_URL)")
        pytest.skip("the health check under test is PostgreSQL's (DATABASE_URL)")
    wrapper = connections.create_connection("default")
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def check_as_a_request_starts(wrapper):
    wrapper.health_check_done = False
    wrapper.close_if_health_check_failed()


@pytest.mark.django_db
def test_a_healthy_idle_connection_is_checked_without_a_statement(own_connection, monkeypatch):
    sent = []
    monkeypatch.setattr(own_connection, "is_usable", lambda: sent.append("SELECT 1") or True)
    assert own_connection.health_check_enabled
    for _ in range(3):
        check_as_a_request_starts(own_connection)
    assert sent == []
    assert own_connection.connection is not None


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_replaced_before_it_is_used(own_connection):
    ended = own_connection.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [ended.info.backend_pid])
    deadline = time.monotonic() + 10  # the server's goodbye reaches the socket asynchronously
    while not ended.closed and time.monotonic() < deadline:
        check_as_a_request_starts(own_connection)
        if own_connection.connection is None:
            break
        time.sleep(0.01)
    assert own_connection.connection is None  # closed by the check, not by a failed statement
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
    assert own_connection.connection is not ended
