"""A new person's first sign-in in the browser: the manager creates the account on the people page, the person
signs in with the one-time password, is sent to the change-password page before anything else, chooses their own
and lands on their home page; a reset by the manager sends them through it again."""
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from annotation.models import OneTimePassword
from tests.annotation.conftest import diqad, make_campaign  # noqa: F401 (fixture)

from .conftest import PASSWORD, expect, first_sign_in, keep_shot, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWN = "my-own-pass-phrase-7"
LOOK = Path("/work/shots/accounts")


def look(page, name):
    keep_shot(page, LOOK, name)


def test_first_sign_in_forces_a_new_password_then_home(page, second_page, diqad):  # noqa: F811
    lead = User.objects.create_user("lead", password=PASSWORD, is_staff=True)
    campaign = make_campaign(lead, {}, diqad, roles={})
    sign_in(page, "lead")
    page.goto(f"/manage/campaigns/{campaign.pk}/members/")
    page.fill("#id_a-people", "nina nina@example.org")
    page.select_option("#id_a-role", "annotator")
    page.click("#create-accounts")
    one_time = page.text_content("#credentials tr[data-username='nina'] .password")

    person = second_page
    sign_in(person, "nina", one_time)
    expect(person).to_have_url(re.compile(r"/accounts/password/$"))
    expect(person.locator("#password-forced")).to_be_visible()
    shot(person, "first-sign-in-change-password", "Change password", "#password-form")
    look(person, "first-sign-in-change-password")
    person.goto(f"/campaigns/{campaign.pk}/annotate/")  # nothing else opens meanwhile
    expect(person).to_have_url(re.compile(r"/accounts/password/$"))
    person.fill("#id_old_password", one_time)
    person.fill("#id_new_password1", OWN)
    person.fill("#id_new_password2", OWN)
    person.click("#change-password-submit")
    expect(person).to_have_url(re.compile(r"/$"))
    expect(person.locator(f"a[href='/campaigns/{campaign.pk}/annotate/']")).to_be_visible()
    look(person, "first-sign-in-home")
    nina = User.objects.get(username="nina")
    assert nina.check_password(OWN) and not OneTimePassword.objects.filter(user=nina).exists()

    # The manager resets it: her page signs her out, and the new one-time password asks for a change again.
    page.goto(f"/manage/campaigns/{campaign.pk}/members/")
    page.locator("#members tr[data-username='nina'] .reset-password button").click()
    again = page.text_content("#credentials tr[data-username='nina'] .password")
    look(page, "reset-password-shown-once")
    person.goto("/")
    expect(person).to_have_url(re.compile(r"/accounts/login/"))
    first_sign_in(person, "nina", again)
    expect(person.locator("#change-password")).to_be_visible()
    person.click("#change-password")
    expect(person).to_have_url(re.compile(r"/accounts/password/$"))
    expect(person.locator("#password-forced")).to_have_count(0)
    look(person, "change-password-from-header")
