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


# ---------------------------------------------------------------- per account, behind a proxy (issue 41, item 2)

PROXY = "10.9.0.2"


def via_proxy(path, username, password, forwarded, client=None):
    """An attempt through the reverse proxy: the connection is the proxy's, the person's address is forwarded."""
    client = client or Client(REMOTE_ADDR=PROXY)
    extra = {"HTTP_X_FORWARDED_FOR": forwarded}
    if path == TOKEN:
        return client.post(path, {"username": username, "password": password}, content_type="application/json",
                           **extra)
    return client.post(path, {"username": username, "password": password}, **extra)


def signed_in(response):
    return response.status_code in (200, 302) and (response.status_code == 302 or "token" in response.json())


@pytest.fixture
def checked(monkeypatch):
    """The passwords the server checks."""
    seen, real = [], User.check_password

    def counting(user, raw_password):
        seen.append(raw_password)
        return real(user, raw_password)

    monkeypatch.setattr(User, "check_password", counting)
    return seen


@pytest.fixture
def ten_people(db):
    return [User.objects.create_user(f"person{n}", password=f"right-{n}") for n in range(10)]


@pytest.mark.django_db
@pytest.mark.parametrize("path", [SITE, TOKEN])
def test_behind_a_declared_proxy_people_sign_in_while_another_address_guesses(ten_people, settings, path):
    settings.TRUSTED_PROXIES = [PROXY]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"login": "10/min"}}
    guesser = "198.51.100.7"
    for round_ in range(4):
        # The guesser sprays other accounts and the people's own, past every limit, between the people's sign-ins.
        for n in range(15):
            via_proxy(path, f"nobody{round_}-{n}", "guess", guesser)
        assert via_proxy(path, "person0", "guess", guesser).status_code == 429
        for n, person in enumerate(ten_people):
            # Everyone's connection is the proxy's; half of the people share one address (an office).
            address = "203.0.113.50" if n % 2 else f"203.0.113.{n}"
            assert signed_in(via_proxy(path, person.username, f"right-{n}", address)), (round_, n)


@pytest.mark.django_db
def test_the_forwarded_address_is_believed_only_from_a_declared_proxy(victim, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"login": "3/min"}}
    # No proxy declared: a client writing X-Forwarded-For does not escape its address's counter.
    for n in range(3):
        via_proxy(SITE, f"user{n}", "guess", f"192.0.2.{n}")
    assert via_proxy(SITE, "user9", "guess", "192.0.2.99").status_code == 429
    # Declared: the proxy's own address and what a client wrote left of the proxy's entry are not believed.
    settings.TRUSTED_PROXIES = ["10.9.0.0/24"]
    for n in range(3):
        via_proxy(SITE, f"other{n}", "guess", f"1.2.3.{n}, 192.0.2.200")
    assert via_proxy(SITE, "other9", "guess", "9.9.9.9, 192.0.2.200").status_code == 429
    assert via_proxy(SITE, "victim", "right-password", "192.0.2.201").status_code == 302


@pytest.mark.django_db
@pytest.mark.parametrize("path", [SITE, ADMIN, TOKEN])
def test_one_accounts_guesses_from_many_addresses_stop_at_its_limit(victim, settings, path, checked):
    settings.LOGIN_FAILURE_LIMIT = 5
    codes = [attempt(path, "victim", f"guess{n}", address=f"10.1.{n}.1").status_code for n in range(25)]
    assert len(checked) == 5 and codes[5:] == [429] * 20, codes
    # The right password from yet another address, in a browser that never signed in here, is refused too.
    assert attempt(path, "victim", "right-password", address="10.2.0.1").status_code == 429


@pytest.mark.django_db
@pytest.mark.parametrize("path", [SITE, ADMIN, TOKEN])
def test_a_browser_that_signed_in_before_is_not_locked_out_by_other_peoples_guesses(victim, settings, path):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"login": "3/min"}}
    own = Client(REMOTE_ADDR="10.0.0.1")
    assert attempt_with(own, SITE, "victim", "right-password").status_code == 302
    device = own.cookies["hb_known_device"].value
    own.logout()  # the test client's sign-out forgets every cookie; the browser keeps this one
    own.cookies["hb_known_device"] = device
    # Someone guesses the account from many addresses and fills the person's own address's counter too.
    for n in range(10):
        attempt(path, "victim", "guess", address=f"10.3.{n}.1")
        attempt(path, f"user{n}", "guess", address="10.0.0.1")
    assert attempt(path, "victim", "right-password", address="10.0.0.1").status_code == 429  # a new browser
    # The person's browser signs in; its own wrong passwords still stop at the limit.
    assert attempt_with(own, path, "victim", "right-password").status_code in (200, 302)
    for _ in range(3):
        assert attempt_with(own, path, "victim", "typo").status_code in (200, 400)
    assert attempt_with(own, path, "victim", "right-password").status_code == 429
    # A cookie of another account, or a forged one, counts for nothing.
    forged = Client(REMOTE_ADDR="10.0.0.1")
    forged.cookies["hb_known_device"] = device[:-2] + ("xx" if not device.endswith("xx") else "yy")
    assert attempt_with(forged, path, "victim", "right-password").status_code == 429


def attempt_with(client, path, username, password):
    if path == TOKEN:
        return client.post(path, {"username": username, "password": password}, content_type="application/json")
    return client.post(path, {"username": username, "password": password})


@pytest.mark.django_db
def test_the_change_password_page_counts_wrong_old_passwords(victim, settings, checked):
    settings.LOGIN_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="10.0.0.1")
    client.force_login(victim)
    change = {"new_password1": "a-new-password-1", "new_password2": "a-new-password-1"}
    codes = [client.post("/accounts/password/", {"old_password": f"guess{n}", **change}).status_code
             for n in range(10)]
    refused = client.post("/accounts/password/", {"old_password": "right-password", **change})
    assert codes[:3] == [200] * 3 and codes[3:] == [429] * 7 and len(checked) == 3, codes
    assert refused.status_code == 429 and b'id="password-throttled"' in refused.content
    # The same counter as the sign-in pages: the account is refused there too.
    assert attempt(SITE, "victim", "right-password", address="10.4.0.1").status_code == 429
    assert User.objects.filter(username="victim").get().password == victim.password  # unchanged
