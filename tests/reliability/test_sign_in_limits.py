"""Sign-in throttling guards every sign-in path with one counter per normalised username and one per
address; API tokens expire and die with a password change (issue 18, findings 2 and 14)."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

SITE, ADMIN, TOKEN = "/accounts/login/", "/admin/login/", "/api/v1/auth/token/"


@pytest.fixture(autouse=True)
def fast_hashes(settings, empty_cache):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def victim(db):
    return User.objects.create_user("victim", password="right-password", is_staff=True)


def attempt(path, username, password, address="10.0.0.1"):
    client = Client(REMOTE_ADDR=address)
    if path == TOKEN:
        return client.post(path, {"username": username, "password": password}, content_type="application/json")
    return client.post(path, {"username": username, "password": password})


@pytest.mark.django_db
def test_admin_login_is_throttled(victim, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        assert attempt(ADMIN, "victim", "wrong").status_code == 200
    blocked = attempt(ADMIN, "victim", "right-password")
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0


@pytest.mark.django_db
@pytest.mark.parametrize("first", [SITE, ADMIN, TOKEN])
@pytest.mark.parametrize("then", [SITE, ADMIN, TOKEN])
def test_one_counter_for_every_sign_in_path(victim, settings, first, then):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        assert attempt(first, "victim", "wrong").status_code in (200, 400)
    assert attempt(then, "victim", "right-password").status_code == 429


@pytest.mark.django_db
@pytest.mark.parametrize("path", [SITE, ADMIN, TOKEN])
def test_spellings_of_a_username_share_its_counter(victim, settings, path):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        attempt(SITE, "victim", "wrong")
    for variant in (" victim", "victim\t", "\uff56\uff49\uff43\uff54\uff49\uff4d", "VICTIM", "Victim "):
        assert attempt(path, variant, "right-password").status_code == 429, variant


@pytest.mark.django_db
@pytest.mark.parametrize("path", [SITE, ADMIN, TOKEN])
def test_guesses_per_address_are_limited_by_the_configured_rate(victim, settings, path):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"login": "10/min"}}
    codes = [attempt(path, f"user{n}", "guess").status_code for n in range(40)]
    assert codes[:10] == [codes[0]] * 10 and set(codes[10:]) == {429}, codes
    # The victim's own account from that address is refused too; from another address it signs in.
    assert attempt(path, "victim", "right-password").status_code == 429
    assert attempt(path, "victim", "right-password", address="10.0.0.2").status_code in (200, 302)


# ---------------------------------------------------------------- API tokens (finding 14)

def token_for(user):
    answer = Client().post(TOKEN, {"username": user.username, "password": "right-password"},
                           content_type="application/json")
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def read_with(token):
    return Client().get("/api/v1/benchmarks/", HTTP_AUTHORIZATION=f"Token {token}")


@pytest.mark.django_db
def test_tokens_expire_after_the_configured_days(victim, settings):
    settings.API_TOKEN_DAYS = 7
    token = token_for(victim)
    assert read_with(token).status_code == 200
    Token.objects.filter(key=token).update(created=timezone.now() - timedelta(days=7, seconds=1))
    expired = read_with(token)
    # 403 rather than 401: session authentication comes first, and it sends no WWW-Authenticate challenge.
    assert expired.status_code in (401, 403) and expired.json()["code"] == "token_expired"
    fresh = token_for(victim)
    assert fresh != token and read_with(fresh).status_code == 200


@pytest.mark.django_db
def test_a_password_change_invalidates_tokens(victim):
    token = token_for(victim)
    victim.set_password("a-new-password")
    victim.save()
    assert read_with(token).status_code in (401, 403)
    assert not Token.objects.filter(user=victim).exists()
