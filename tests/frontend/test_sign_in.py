import subprocess
import sys

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache

from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.mark.django_db
def test_sign_in_page_and_redirect_for_anonymous(client):
    assert client.get("/").status_code == 302
    page = client.get("/accounts/login/")
    assert (page.status_code == 200 and b"csrfmiddlewaretoken" in page.content
            and b'<label for="id_username">' in page.content)


@pytest.mark.django_db
def test_sign_in_is_throttled_after_repeated_failures(client, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    User.objects.create_user("ann", password="right-password")
    for _ in range(3):
        assert client.post("/accounts/login/", {"username": "ann", "password": "wrong"}).status_code == 200
    blocked = client.post("/accounts/login/", {"username": "ann", "password": "right-password"})
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert b"Too many failed sign-in attempts" in blocked.content
    # Another username from the same address is not blocked.
    User.objects.create_user("bob", password="right-password")
    assert client.post("/accounts/login/", {"username": "bob", "password": "right-password"}).status_code == 302


@pytest.mark.django_db
def test_successful_sign_in_clears_failures(client, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    User.objects.create_user("ann", password="right-password")
    for _ in range(2):
        client.post("/accounts/login/", {"username": "ann", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "ann", "password": "right-password"}).status_code == 302
    client.logout()
    for _ in range(2):
        assert client.post("/accounts/login/", {"username": "ann", "password": "wrong"}).status_code == 200


@pytest.mark.django_db
def test_api_token_endpoint_is_throttled(client, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    User.objects.create_user("ann", password="right-password")
    good = client.post("/api/v1/auth/token/", {"username": "ann", "password": "right-password"})
    assert good.status_code == 200 and len(good.json()["token"]) == 40
    for _ in range(2):
        refused = client.post("/api/v1/auth/token/", {"username": "ann", "password": "nope"})
        assert refused.json()["code"] == "invalid_credentials"
    assert client.post("/api/v1/auth/token/", {"username": "ann", "password": "right-password"}).status_code == 429


def test_production_mode_refuses_the_default_secret_key(tmp_path):
    env = {"HB_PRODUCTION": "1", "HB_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_production_mode_settings_are_hardened(tmp_path):
    env = {"HB_PRODUCTION": "1", "SECRET_KEY": "x" * 60, "HB_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "ALLOWED_HOSTS": "hb.example.org"}
    code = ("from django.conf import settings as s; print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
            "s.SECURE_HSTS_SECONDS > 0, s.ALLOWED_HOSTS)")
    result = subprocess.run([sys.executable, "-c", "import django, os; "
                                                   "os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; "
                                                   f"django.setup(); {code}"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False True True True ['hb.example.org']", result.stderr
