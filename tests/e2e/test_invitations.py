"""An account belongs to its owner, in the browser: a manager's reset of a person who works in another campaign is
refused on the people page with the reason; adding that person sends an invitation the manager sees pending and the
person accepts on their home page (in their language); an administrator still resets the password."""
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from annotation import actions
from annotation.models import Invitation, Membership, OneTimePassword
from frontend.models import Preferences
from tests.annotation.conftest import diqad, make_campaign  # noqa: F401 (fixture)

from .conftest import PASSWORD, expect, keep_shot, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOOK = Path("/work/shots/acct")


def look(page, name):
    keep_shot(page, LOOK, name)


def test_a_reset_not_theirs_is_refused_and_an_invitation_is_accepted(page, second_page, diqad):  # noqa: F811
    admin = User.objects.create_user("admin", password=PASSWORD, is_staff=True)
    boss, rival = (User.objects.create_user(name, password=PASSWORD) for name in ("boss", "rival"))
    qc = User.objects.create_user("quinn", password=PASSWORD)
    Preferences.objects.create(user=qc, language="ko")
    mine = make_campaign(admin, {"boss": boss}, diqad, roles={"boss": "manager"})
    theirs = make_campaign(admin, {"rival": rival, "quinn": qc}, diqad, roles={"rival": "manager", "quinn": "qc"})
    mine.name, theirs.name = "Support dialogues", "Legal dialogues"
    mine.save(update_fields=["name"])
    theirs.save(update_fields=["name"])
    actions.add_member(mine, actor=admin, user=qc, role="annotator")  # an administrator added them here

    sign_in(page, "boss")
    page.goto(f"/manage/campaigns/{mine.pk}/members/")
    page.locator("#members tr[data-username='quinn'] .reset-password button").click()
    refusal = page.locator(".messages .error")
    expect(refusal).to_contain_text("quinn works in campaigns you do not manage")
    expect(refusal).to_contain_text("ask an administrator")
    expect(page.locator("#credentials")).to_have_count(0)
    shot(page, "reset-refused", "People", ".messages .error")
    look(page, "manager-reset-refused")
    assert User.objects.get(pk=qc.pk).check_password(PASSWORD) and not OneTimePassword.objects.exists()

    # Giving quinn another role here asks quinn first: the manager sees it pending.
    page.fill("#id_m-usernames", "quinn")
    page.select_option("#id_m-role", "expert")
    page.click("#add-members")
    expect(page.locator(".messages .info")).to_contain_text("quinn invited as expert")
    expect(page.locator("#pending-invitations tr[data-username='quinn'][data-role='expert']")).to_be_visible()
    look(page, "manager-invitation-pending")
    assert not Membership.objects.filter(campaign=mine, user=qc, role="expert").exists()

    # quinn, in Korean, sees the invitation on the home page and accepts it.
    person = second_page
    sign_in(person, "quinn")
    person.goto("/")
    invitation = person.locator("#invitations .invitation[data-role='expert']")
    expect(invitation).to_contain_text("Support dialogues")
    expect(invitation).to_contain_text("boss")
    shot(person, "invitation-home", "", "#invitations")
    look(person, "invited-person-home-ko")
    invitation.locator("button.primary").click()
    expect(person).to_have_url(re.compile(r"/$"))
    expect(person.locator("#invitations")).to_have_count(0)
    look(person, "invited-person-accepted-ko")
    assert Membership.objects.filter(campaign=mine, user=qc, role="expert", active=True).exists()
    assert Invitation.objects.get(campaign=mine, user=qc).state == "accepted"

    # An administrator still resets the password from the same page.
    page.context.clear_cookies()
    sign_in(page, "admin")
    page.goto(f"/manage/campaigns/{mine.pk}/members/")
    page.locator("#members tr[data-username='quinn'][data-role='annotator'] .reset-password button").click()
    expect(page.locator("#credentials tr[data-username='quinn'] .password")).to_be_visible()
    assert OneTimePassword.objects.filter(user=qc, set_by=admin).exists()
