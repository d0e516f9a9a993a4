"""The site's own 404 and 500 pages, a favicon, and one log line per 403, in every mode."""
import logging

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


def test_unknown_url_gets_the_sites_404_page_without_the_url_list(client):
    response = client.get("/no-such-page/")
    page = response.content.decode()
    assert response.status_code == 404
    assert 'id="not-found"' in page and "/no-such-page/" in page and "app.css" in page
    assert "URLconf" not in page and "api/v1/" not in page


def test_a_crash_gets_the_sites_500_page(client, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret detail of the crash")

    monkeypatch.setattr("annotation.policy.visible_campaigns", broken)
    client.force_login(User.objects.create_user("someone"))
    client.raise_request_exception = False
    response = client.get("/")
    page = response.content.decode()
    assert response.status_code == 500
    assert 'id="server-error"' in page and "app.css" in page and "secret detail" not in page


def test_favicon(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon["Content-Type"] in ("image/x-icon", "image/vnd.microsoft.icon")
    body = b"".join(icon.streaming_content) if icon.streaming else icon.content
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO file
    page = client.get("/accounts/login/").content.decode()
    assert 'rel="icon"' in page and "favicon.svg" in page
    svg = client.get("/static/frontend/favicon.svg")
    assert svg.status_code == 200


def test_a_403_logs_one_line_and_no_traceback(client, caplog):
    client.force_login(User.objects.create_user("annotator"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get("/runs/").status_code == 403
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.getMessage() == "Forbidden (Permission denied): /runs/"
    assert record.exc_info is None and record.exc_text is None
    handler = logging.StreamHandler()
    assert "\n" not in handler.format(record) and "Traceback" not in handler.format(record)
