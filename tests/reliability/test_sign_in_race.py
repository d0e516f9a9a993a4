"""Sign-in attempts sent at once are counted one after the other, each before its password is checked: twelve
wrong passwords fired together from one address at a live server have at most the limit (5) checked."""
import re
import threading
import time
from collections import Counter

import pytest
import requests
from django.contrib.auth.models import User

ATTEMPTS = 12
pytestmark = pytest.mark.usefixtures("empty_cache")  # no counts left by another test, wherever they are kept


@pytest.fixture
def checks(monkeypatch):
    """Every password check the server makes (the live server runs in this process)."""
    counted, lock = [], threading.Lock()
    real = User.check_password

    def counting(user, raw_password):
        with lock:
            counted.append(user.username)
        time.sleep(0.5)  # a slow hash: attempts that overlap are sure to overlap while a password is checked
        return real(user, raw_password)

    monkeypatch.setattr(User, "check_password", counting)
    return counted


def all_at_once(send, prepare=lambda: None):
    """`send(prepare())` in ATTEMPTS threads released together (each prepared first); their status codes."""
    start, codes = threading.Barrier(ATTEMPTS), []

    def one():
        ready = prepare()
        start.wait()
        codes.append(send(ready))

    threads = [threading.Thread(target=one) for _ in range(ATTEMPTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return Counter(codes)


@pytest.mark.django_db(transaction=True)  # the live server's threads read what the test writes
def test_parallel_wrong_passwords_to_the_token_endpoint_check_at_most_the_limit(live_server, settings, checks):
    settings.LOGIN_FAILURE_LIMIT = 5
    User.objects.create_user("victim", password="right-password")
    codes = all_at_once(lambda _: requests.post(f"{live_server.url}/api/v1/auth/token/", timeout=120,
                                                json={"username": "victim", "password": "wrong"}).status_code)
    assert codes[400] <= 5 and codes[400] + codes[429] == ATTEMPTS, codes
    assert len(checks) <= 5, f"{len(checks)} passwords checked: {codes}"
    refused = requests.post(f"{live_server.url}/api/v1/auth/token/", json={"username": "victim",
                                                                            "password": "right-password"}, timeout=60)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0


@pytest.mark.django_db(transaction=True)
def test_parallel_wrong_passwords_to_the_sign_in_page_check_at_most_the_limit(live_server, settings, checks):
    settings.LOGIN_FAILURE_LIMIT = 5
    User.objects.create_user("victim", password="right-password")

    def form():  # each browser has its session and its form's CSRF token before the posts start
        session = requests.Session()
        page = session.get(f"{live_server.url}/accounts/login/", timeout=60).text
        return session, re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

    def sign_in(ready):
        session, token = ready
        with session:
            return session.post(f"{live_server.url}/accounts/login/", timeout=120, allow_redirects=False,
                                data={"username": "victim", "password": "wrong", "csrfmiddlewaretoken": token},
                                headers={"Referer": f"{live_server.url}/accounts/login/"}).status_code

    codes = all_at_once(sign_in, form)
    assert codes[200] <= 5 and codes[200] + codes[429] == ATTEMPTS, codes
    assert len(checks) <= 5, f"{len(checks)} passwords checked: {codes}"


@pytest.mark.django_db(transaction=True)
def test_right_passwords_sent_at_once_all_sign_in(live_server, settings, checks):
    """Twelve right sign-ins at once, to one account and to twelve accounts, from one address: none is refused
    because of the attempts in flight beside it (each waits for a place instead)."""
    settings.LOGIN_FAILURE_LIMIT = 5
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"login": "10/min"}}
    User.objects.create_user("shared", password="right-password")
    for n in range(ATTEMPTS):
        User.objects.create_user(f"person{n}", password=f"right-{n}")
    url = f"{live_server.url}/api/v1/auth/token/"
    same = all_at_once(lambda _: requests.post(url, timeout=120, json={"username": "shared",
                                                                       "password": "right-password"}).status_code)
    assert same == Counter({200: ATTEMPTS}), same
    names = iter(range(ATTEMPTS))
    many = all_at_once(lambda n: requests.post(url, timeout=120, json={"username": f"person{n}",
                                                                       "password": f"right-{n}"}).status_code,
                       lambda: next(names))
    assert many == Counter({200: ATTEMPTS}), many
