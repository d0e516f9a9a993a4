"""Signing out of the site offers to end the person's API token (ticked by default), and an ended token no longer
works; left unticked, the token stays."""
import pytest
from django.contrib.auth.models import User
from django.test import Client

PASSWORD = "right-password"


@pytest.fixture
def person(db):
    return User.objects.create_user("ann", password=PASSWORD)


def token_for(username):
    answer = Client().post("/api/v1/auth/token/", {"username": username, "password": PASSWORD},
                           content_type="application/json")
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def works(token):
    return Client().get("/api/v1/benchmarks/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 200


@pytest.mark.django_db
def test_the_sign_out_form_offers_to_end_the_token_ticked(person):
    site = Client()
    site.force_login(person)
    page = site.get("/").content.decode()
    assert '<input type="checkbox" name="revoke_token" value="1" checked>' in page and "end my API token" in page


@pytest.mark.django_db
def test_signing_out_with_the_box_ticked_ends_the_token(person):
    token = token_for("ann")
    site = Client()
    site.force_login(person)
    assert works(token)
    signed_out = site.post("/accounts/logout/", {"revoke_token": "1"})
    assert signed_out.status_code == 302 and signed_out["Location"] == "/accounts/login/"
    refused = Client().get("/api/v1/benchmarks/", HTTP_AUTHORIZATION=f"Token {token}")
    assert refused.status_code in (401, 403) and refused.json()["code"] == "authentication_failed", refused.content
    assert site.get("/").status_code == 302  # signed out of the site too


@pytest.mark.django_db
def test_signing_out_unticked_keeps_the_token(person):
    token = token_for("ann")
    site = Client()
    site.force_login(person)
    assert site.post("/accounts/logout/").status_code == 302
    assert works(token)


@pytest.mark.django_db
def test_the_admin_s_sign_out_ends_the_token_too():
    User.objects.create_user("boss", password=PASSWORD, is_staff=True)
    token = token_for("boss")
    admin = Client()
    admin.force_login(User.objects.get(username="boss"))
    assert admin.get("/admin/").status_code == 200 and works(token)
    assert admin.post("/admin/logout/").status_code in (200, 302)
    assert not works(token)
    assert admin.get("/admin/").status_code == 302  # signed out of the admin too
