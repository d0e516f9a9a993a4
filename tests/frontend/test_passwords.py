"""One-time passwords are one time: a new account or a reset password must be changed at the next sign-in before
anything else opens; everyone signed in has a change-password page; a manager resets a member's password with a
new one-time password, shown once, which ends the member's sessions and API tokens."""
import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation import accounts
from annotation.models import Event, OneTimePassword
from core.errors import ActionError
from tests.annotation.conftest import diqad, make_campaign  # noqa: F401 (fixture)

NEW = "a-Long-own-passphrase-42"


@pytest.fixture
def campaign(staff, people, diqad):  # noqa: F811
    return make_campaign(staff, people, diqad)


def passwords_on(page):
    return dict(re.findall(r'data-username="(\w+)"><td>\w+</td><td>[^<]*</td><td><code class="password">([^<]+)<',
                           page))


def create(client, staff, campaign, *names):
    client.force_login(staff)
    page = client.post(f"/manage/campaigns/{campaign.pk}/members/",
                       {"create": "", "a-people": "\n".join(names), "a-role": "annotator"}).content.decode()
    client.logout()
    return passwords_on(page)


def sign_in(client, username, password):
    return client.post("/accounts/login/", {"username": username, "password": password})


def test_first_sign_in_asks_for_a_new_password_before_anything_else(client, staff, campaign, settings):
    settings.AUTH_PASSWORD_VALIDATORS = [{"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"}]
    password = create(client, staff, campaign, "nina")["nina"]
    assert OneTimePassword.objects.filter(user__username="nina").exists()
    assert sign_in(client, "nina", password).status_code == 302
    for url in ("/", f"/campaigns/{campaign.pk}/annotate/", "/manage/", "/admin/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"] == "/accounts/password/", url
    api = client.get("/api/v1/campaigns/")
    assert api.status_code == 403 and api.json()["code"] == "password_change_required"
    page = client.get("/accounts/password/").content.decode()
    assert 'id="password-forced"' in page and 'id="id_new_password1"' in page
    # The password validators apply: a weak one is refused and nothing changes.
    weak = client.post("/accounts/password/", {"old_password": password, "new_password1": "123",
                                               "new_password2": "123"})
    assert weak.status_code == 200 and "too short" in weak.content.decode()
    same = client.post("/accounts/password/", {"old_password": password, "new_password1": password,
                                               "new_password2": password})
    assert same.status_code == 200 and "other than the one you have now" in same.content.decode()
    assert client.get("/").status_code == 302
    done = client.post("/accounts/password/", {"old_password": password, "new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302 and done["Location"] == "/"
    assert client.get("/").status_code == 200 and not OneTimePassword.objects.filter(user__username="nina").exists()
    assert User.objects.get(username="nina").check_password(NEW)
    # A later sign-in goes straight on.
    fresh = Client()
    assert sign_in(fresh, "nina", NEW)["Location"] == "/" and fresh.get("/").status_code == 200


def test_an_api_token_is_refused_until_the_password_is_changed(client, staff, campaign):
    password = create(client, staff, campaign, "omar")["omar"]
    refused = client.post("/api/v1/auth/token/", {"username": "omar", "password": password},
                          content_type="application/json")
    assert refused.status_code == 403 and refused.json()["code"] == "password_change_required"
    assert not Token.objects.filter(user__username="omar").exists()
    sign_in(client, "omar", password)
    client.post("/accounts/password/", {"old_password": password, "new_password1": NEW, "new_password2": NEW})
    given = client.post("/api/v1/auth/token/", {"username": "omar", "password": NEW}, content_type="application/json")
    assert given.status_code == 200 and given.json()["token"]


def test_every_signed_in_person_may_change_their_password_from_the_header(client, people):
    annotator = people["ann1"]
    annotator.set_password("old-pass-word-1")
    annotator.save()
    client.force_login(annotator)
    home = client.get("/").content.decode()
    assert 'href="/accounts/password/"' in home and "Change password" in home
    page = client.get("/accounts/password/")
    assert page.status_code == 200 and 'id="password-forced"' not in page.content.decode()
    wrong = client.post("/accounts/password/", {"old_password": "nope", "new_password1": NEW, "new_password2": NEW})
    assert wrong.status_code == 200 and not User.objects.get(pk=annotator.pk).check_password(NEW)
    done = client.post("/accounts/password/", {"old_password": "old-pass-word-1", "new_password1": NEW,
                                               "new_password2": NEW})
    assert done.status_code == 302 and User.objects.get(pk=annotator.pk).check_password(NEW)
    assert client.get("/").status_code == 200  # this session stays signed in
    assert Client().get("/accounts/password/")["Location"].startswith("/accounts/login/")


def test_a_manager_resets_a_member_s_password(client, people, campaign):
    member = people["ann1"]
    member.set_password("member-pass-1")
    member.save()
    token = Token.objects.create(user=member)
    theirs = Client()
    theirs.force_login(member)
    assert theirs.get("/").status_code == 200
    client.force_login(people["manager"])
    members_page = client.get(f"/manage/campaigns/{campaign.pk}/members/").content.decode()
    assert f"/manage/campaigns/{campaign.pk}/members/{member.pk}/reset-password/" in members_page
    response = client.post(f"/manage/campaigns/{campaign.pk}/members/{member.pk}/reset-password/")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    password = passwords_on(response.content.decode())["ann1"]
    member = User.objects.get(pk=member.pk)
    assert member.check_password(password) and OneTimePassword.objects.filter(user=member).exists()
    assert not Token.objects.filter(key=token.key).exists()
    assert theirs.get("/")["Location"].startswith("/accounts/login/")  # their session ended
    event = Event.objects.get(campaign=campaign, kind="password_reset")
    assert event.figures == {"username": "ann1"} and password not in str(event.figures)
    assert password not in client.get(f"/manage/campaigns/{campaign.pk}/members/").content.decode()  # shown once
    # At their next sign-in they choose their own.
    assert sign_in(theirs, "ann1", password).status_code == 302
    assert theirs.get("/")["Location"] == "/accounts/password/"


def test_who_may_reset_whose_password(client, staff, people, campaign, diqad):  # noqa: F811
    manager = people["manager"]
    other = make_campaign(staff, {"manager": people["outsider"], "ann1": people["ann1"]}, diqad,
                          roles={"manager": "manager", "ann1": "annotator"})

    def refused(actor, user, where=campaign):
        with pytest.raises(ActionError) as error:
            accounts.reset_password(where, actor=actor, user=user)
        return error.value.detail

    assert "not a member" in refused(manager, people["outsider"])  # a manager of another campaign only
    assert "Change your own password" in refused(manager, manager)
    assert "manager" in refused(people["ann1"], people["ann2"])  # an annotator may not
    boss_member = User.objects.create_user("staffer", is_staff=True)
    accounts.add_member(campaign, actor=staff, user=boss_member, role="annotator")
    assert "site-wide role (staff)" in refused(manager, boss_member)
    researcher = User.objects.create_user("researcher")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    accounts.add_member(campaign, actor=staff, user=researcher, role="viewer")
    assert "site-wide role (researcher" in refused(manager, User.objects.get(pk=researcher.pk))
    accounts.add_member(campaign, actor=staff, user=people["outsider"], role="annotator")
    assert "works in campaigns you do not manage" in refused(manager, people["outsider"])
    assert not OneTimePassword.objects.exists() and not Event.objects.filter(kind="password_reset").exists()
    # ann1 labels in both campaigns: neither manager resets it alone (tests/reliability/test_account_reach.py).
    assert "works in campaigns you do not manage" in refused(people["outsider"], people["ann1"], where=other)
    # Staff may reset any member's, even a staff account's; the other campaign's manager its own members'.
    assert accounts.reset_password(campaign, actor=staff, user=boss_member).password
    only_there = User.objects.create_user("only-there")
    accounts.add_member(other, actor=people["outsider"], user=only_there, role="annotator")
    assert accounts.reset_password(other, actor=people["outsider"], user=only_there).password
    # The page of a campaign one does not manage is refused, and so is a refused reset, with nothing written.
    client.force_login(people["outsider"])
    reset = f"/manage/campaigns/{campaign.pk}/members/{people['ann2'].pk}/reset-password/"
    assert client.post(reset).status_code == 403
    client.force_login(manager)
    response = client.post(f"/manage/campaigns/{campaign.pk}/members/{boss_member.pk}/reset-password/", follow=True)
    assert "site-wide role (staff)" in response.content.decode()
