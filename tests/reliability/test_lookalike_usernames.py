"""Look-alike usernames: an account whose name's confusable skeleton (Unicode TR39) equals an existing one's is
refused wherever accounts are made or renamed: the people page, the admin, createsuperuser and the model."""
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.accounts import skeleton

CYRILLIC_ADMIN = "\u0430dmin"  # Cyrillic a
UKRAINIAN_VICTIM = "vict\u0456m"  # Ukrainian i


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admins(world):
    User.objects.create_user("admin", password="pw", is_staff=True)
    User.objects.create_user("victim", password="pw")
    return world


def test_skeletons_follow_tr39():
    # UTS #39's own kind of example: mixed-script and same-script look-alikes meet, other names do not.
    assert skeleton("p\u0430yp\u0430l") == skeleton("paypal") == skeleton("paypaI")
    assert skeleton(CYRILLIC_ADMIN) == skeleton("admin") == skeleton("adrnin")
    assert skeleton(UKRAINIAN_VICTIM) == skeleton("victim")
    assert skeleton("user1") == skeleton("userl") and skeleton("ann1") != skeleton("ann2")
    assert skeleton("\u6c34") != skeleton("\u6728") and skeleton("\ubbfc\uc218") == skeleton("\ubbfc\uc218")


@pytest.mark.django_db
@pytest.mark.parametrize("name", [CYRILLIC_ADMIN, UKRAINIAN_VICTIM, "VICTIM", "\uff41\uff44\uff4d\uff49\uff4e",
                                  "adrnin"])
def test_the_people_page_refuses_a_lookalike_of_an_existing_account(admins, name):
    before = User.objects.count()
    page = signed_in(admins.users["staff"]).post(f"/manage/campaigns/{admins.campaign.pk}/members/", {
        "create": "", "a-people": f"fresh-one\n{name}", "a-role": "annotator"})
    body = page.content.decode()
    assert page.status_code == 400 and User.objects.count() == before, body[-2000:]
    assert "Line 2:" in body and ("looks like the existing account" in body or "exists already" in body)


@pytest.mark.django_db
def test_two_lookalikes_in_one_list_are_refused(admins):
    page = signed_in(admins.users["staff"]).post(f"/manage/campaigns/{admins.campaign.pk}/members/", {
        "create": "", "a-people": "nina\nn\u0456na\nomar", "a-role": "annotator"})
    assert page.status_code == 400 and "looks like &#x27;nina&#x27;, listed above" in page.content.decode()
    assert not User.objects.filter(username__in=["nina", "omar"]).exists()
    fine = signed_in(admins.users["staff"]).post(f"/manage/campaigns/{admins.campaign.pk}/members/", {
        "create": "", "a-people": "ann1\nann2\nann3", "a-role": "annotator"})
    assert fine.status_code == 200 and User.objects.filter(username__in=["ann1", "ann2", "ann3"]).count() == 3


@pytest.mark.django_db
def test_the_admin_refuses_lookalikes_when_adding_and_renaming(admins):
    admin = signed_in(admins.users["staff"])
    admins.users["staff"].is_superuser = True
    admins.users["staff"].save()
    added = admin.post("/admin/auth/user/add/", {"username": CYRILLIC_ADMIN, "password1": "a-long-pass-1",
                                                 "password2": "a-long-pass-1", "usable_password": "true"})
    assert added.status_code == 200 and "looks like the existing account" in added.content.decode()
    assert not User.objects.filter(username=CYRILLIC_ADMIN).exists()
    someone = User.objects.create_user("someone")
    form = {"username": UKRAINIAN_VICTIM, "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "is_active": "on"}
    renamed = admin.post(f"/admin/auth/user/{someone.pk}/change/", form)
    assert renamed.status_code == 200 and "looks like the existing account" in renamed.content.decode()
    kept = admin.post(f"/admin/auth/user/{someone.pk}/change/", {**form, "username": "someone", "email": "s@x.org"})
    assert kept.status_code == 302  # its own name is no look-alike of itself
    assert User.objects.get(pk=someone.pk).username == "someone"


@pytest.mark.django_db
def test_createsuperuser_and_the_model_refuse_lookalikes(admins, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-pass-1")
    with pytest.raises(CommandError, match="looks like the existing account"):
        call_command("createsuperuser", username=CYRILLIC_ADMIN, email="", interactive=False)
    with pytest.raises(ValidationError, match="looks like the existing account"):
        User.objects.create_user(UKRAINIAN_VICTIM)
    victim = User.objects.get(username="victim")
    victim.set_password("new-password")
    victim.save()  # saving an account under its own name is fine
    renamed = User.objects.get(username="admin")
    renamed.username = "v\u0456ctim"
    with pytest.raises(ValidationError):
        renamed.save()
    assert not User.objects.filter(username__in=[CYRILLIC_ADMIN, UKRAINIAN_VICTIM, "v\u0456ctim"]).exists()
