"""An account belongs to its owner: a manager acts alone only on accounts whose every role lies in campaigns they
manage and that hold no site-wide role (annotation.policy.account_reach). Every role a person can hold elsewhere
against every action a manager takes on a member, through the people page as the manager uses it:

- add, change role: given at once to a person who works nowhere else; anyone else is invited (nothing is given
  until they accept on their own pages);
- remove: always (it takes away only a role in the manager's own campaign);
- reset: only an account that is the manager's alone; the rest is refused with the reason and who may do it
  (an administrator, or the person on their Change password page), nothing written.

Staff reset and add anyone; the invited person sees the invitation on their home page and accepts or declines."""
import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation import accounts, actions
from annotation.models import Event, Invitation, Membership, OneTimePassword
from core.errors import ActionError
from tests.annotation.conftest import diqad, make_campaign  # noqa: F401 (fixture)

ELSEWHERE = ["nothing", "annotator", "qc", "expert", "trainer", "manager", "viewer", "researcher", "staff"]
ACTIONS = ["add", "remove", "reset", "change role"]
# Y done at once, I invited (nothing given until they accept), R refused with a message, nothing written.
EXPECTED = {
    "nothing":    "YYYY",
    "annotator":  "IYRI",
    "qc":         "IYRI",
    "expert":     "IYRI",
    "trainer":    "IYRI",
    "manager":    "IYRI",
    "viewer":     "IYRI",
    "researcher": "IYRI",
    "staff":      "IYRI",
}
ROLE_HERE, NEW_ROLE = "annotator", "qc"


@pytest.fixture
def world(db, diqad):  # noqa: F811
    admin = User.objects.create_user("admin", is_staff=True)
    boss, rival = User.objects.create_user("boss"), User.objects.create_user("rival")
    mine = make_campaign(admin, {"boss": boss}, diqad, roles={"boss": "manager"})
    theirs = make_campaign(admin, {"rival": rival}, diqad, roles={"rival": "manager"})
    return admin, boss, mine, theirs


def person_holding(role, admin, theirs):
    person = User.objects.create_user(f"p-{role.replace(' ', '-')}", password="their-own-password-1",
                                      is_staff=role == "staff")
    if role == "researcher":
        person.groups.add(Group.objects.get_or_create(name="researchers")[0])
    elif role not in ("nothing", "staff"):
        actions.add_member(theirs, actor=admin, user=person, role=role)
    return User.objects.get(pk=person.pk)


def act(client, action, campaign, person):
    """The manager's post on the people page, as the page sends it; the page they land on."""
    members = f"/manage/campaigns/{campaign.pk}/members/"
    if action == "reset":
        return client.post(f"{members}{person.pk}/reset-password/", follow=True)
    if action == "remove":
        return client.post(members, {"m-usernames": person.username, "m-role": ROLE_HERE, "remove": ""}, follow=True)
    role = ROLE_HERE if action == "add" else NEW_ROLE
    return client.post(members, {"m-usernames": person.username, "m-role": role, "add": ""}, follow=True)


def outcome(action, campaign, person, page):
    """Y, I or R, read from the database (and checked against what the page says)."""
    held = set(Membership.objects.filter(campaign=campaign, user=person, active=True).values_list("role", flat=True))
    pending = set(Invitation.objects.filter(campaign=campaign, user=person, state="pending")
                  .values_list("role", flat=True))
    if action == "reset":
        if OneTimePassword.objects.filter(user=person).exists():
            assert 'class="password"' in page
            return "Y"
        assert User.objects.get(pk=person.pk).check_password("their-own-password-1")
        assert "not yours to reset: ask an administrator" in page and 'class="password"' not in page, page
        assert not Event.objects.filter(kind="password_reset").exists()
        return "R"
    if action == "remove":
        return "Y" if ROLE_HERE not in held else "R"
    role = ROLE_HERE if action == "add" else NEW_ROLE
    if role in held:
        assert not pending and "added to the campaign" in page
        return "Y"
    if role in pending:
        assert "invited as" in page and "Invitations waiting for an answer" in page
        return "I"
    return "R"


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("elsewhere", ELSEWHERE)
def test_what_a_manager_may_do_to_a_person_who_works_elsewhere(client, world, elsewhere, action):
    admin, boss, mine, theirs = world
    person = person_holding(elsewhere, admin, theirs)
    if action != "add":
        actions.add_member(mine, actor=admin, user=person, role=ROLE_HERE)  # an administrator added them
    client.force_login(boss)
    page = act(client, action, mine, person)
    assert page.status_code == 200
    expected = EXPECTED[elsewhere][ACTIONS.index(action)]
    assert outcome(action, mine, person, page.content.decode()) == expected
    # Whatever happened here, the person's roles elsewhere are as they were.
    assert Membership.objects.filter(campaign=theirs, user=person, active=True).count() == (
        0 if elsewhere in ("nothing", "researcher", "staff") else 1)


def test_the_reported_attack_no_longer_hands_over_the_account(client, world):
    """The issue's path: a manager adds a person who is QC elsewhere, resets the password and signs in as them."""
    admin, boss, mine, theirs = world
    qc = person_holding("qc", admin, theirs)
    actions.add_member(mine, actor=admin, user=qc, role="annotator")
    token = Token.objects.create(user=qc)
    client.force_login(boss)
    page = client.post(f"/manage/campaigns/{mine.pk}/members/{qc.pk}/reset-password/", follow=True)
    assert "works in campaigns you do not manage" in page.content.decode()
    assert Client().post("/accounts/login/", {"username": qc.username, "password": "their-own-password-1"}
                         ).status_code == 302  # still their own password
    assert Token.objects.filter(key=token.key).exists()
    with pytest.raises(ActionError) as refused:
        accounts.reset_password(mine, actor=boss, user=qc)
    assert refused.value.code == "forbidden"


def test_an_administrator_still_resets_anyone_from_their_pages(client, world):
    admin, boss, mine, theirs = world
    for role in ("qc", "researcher", "manager"):
        person = person_holding(role, admin, theirs)
        actions.add_member(mine, actor=admin, user=person, role="annotator")
        client.force_login(admin)
        page = client.post(f"/manage/campaigns/{mine.pk}/members/{person.pk}/reset-password/")
        assert page.status_code == 200 and 'class="password"' in page.content.decode()
        assert OneTimePassword.objects.filter(user=person, set_by=admin).exists()


def test_a_removed_member_who_now_works_elsewhere_is_not_restored_without_them(client, world):
    admin, boss, mine, theirs = world
    person = person_holding("nothing", admin, theirs)
    membership = actions.add_member(mine, actor=boss, user=person, role="annotator")
    actions.set_member_active(membership, actor=boss, active=False)
    actions.add_member(theirs, actor=admin, user=person, role="expert")
    client.force_login(boss)
    page = client.post(f"/manage/memberships/{membership.pk}/active/", {"active": "1"}, follow=True)
    assert "invite them instead" in page.content.decode()
    assert not Membership.objects.get(pk=membership.pk).active


def test_the_api_refuses_to_add_a_person_who_works_elsewhere(world):
    from rest_framework.test import APIClient

    admin, boss, mine, theirs = world
    person = person_holding("annotator", admin, theirs)
    api = APIClient()
    api.force_authenticate(boss)
    answer = api.post("/api/v1/memberships/", {"campaign": mine.pk, "user": person.username, "role": "annotator"},
                      format="json")
    assert answer.status_code == 403 and answer.json()["code"] == "acceptance_required", answer.content
    assert not Membership.objects.filter(campaign=mine, user=person).exists()


def test_the_invited_person_accepts_or_declines_on_their_own_page(client, world):
    admin, boss, mine, theirs = world
    person = person_holding("annotator", admin, theirs)
    client.force_login(boss)
    act(client, "add", mine, person)
    invitation = Invitation.objects.get(campaign=mine, user=person)
    members = client.get(f"/manage/campaigns/{mine.pk}/members/").content.decode()
    assert 'id="pending-invitations"' in members and f'data-username="{person.username}"' in members
    # Nobody else answers it: not even the manager, nor another person (not found).
    assert client.post(f"/invitations/{invitation.pk}/accept/").status_code == 404
    theirs_client = Client()
    theirs_client.force_login(person)
    home = theirs_client.get("/").content.decode()
    assert 'id="invitations"' in home and mine.name in home and "invited by boss" in home
    accepted = theirs_client.post(f"/invitations/{invitation.pk}/accept/", follow=True).content.decode()
    assert "You joined" in accepted and 'id="invitations"' not in accepted
    assert Membership.objects.filter(campaign=mine, user=person, role="annotator", active=True).exists()
    event = Event.objects.get(campaign=mine, kind="member_added", figures__user=person.username)
    assert event.actor == person and event.figures["invited_by"] == "boss"
    assert theirs_client.post(f"/invitations/{invitation.pk}/accept/", follow=True).status_code == 200
    assert Membership.objects.filter(campaign=mine, user=person).count() == 1
    # A second invitation, declined: nothing given.
    act(client, "change role", mine, person)
    second = Invitation.objects.get(campaign=mine, user=person, state="pending")
    declined = theirs_client.post(f"/invitations/{second.pk}/decline/", follow=True).content.decode()
    assert "You declined" in declined
    assert not Membership.objects.filter(campaign=mine, user=person, role=NEW_ROLE).exists()
    assert Invitation.objects.get(pk=second.pk).state == "declined"


def test_the_manager_withdraws_and_a_lapsed_invitation_gives_nothing(client, world):
    admin, boss, mine, theirs = world
    person = person_holding("viewer", admin, theirs)
    first = actions.invite_member(mine, actor=boss, user=person, role="annotator")
    assert actions.invite_member(mine, actor=boss, user=person, role="annotator") == first  # one pending
    client.force_login(boss)
    client.post(f"/manage/invitations/{first.pk}/withdraw/")
    assert Invitation.objects.get(pk=first.pk).state == "withdrawn"
    with pytest.raises(ActionError):
        actions.accept_invitation(first, actor=person)
    second = actions.invite_member(mine, actor=boss, user=person, role="annotator")
    actions.set_member_active(Membership.objects.get(campaign=mine, user=boss), actor=admin, active=False)
    with pytest.raises(ActionError) as lapsed:
        actions.accept_invitation(second, actor=person)
    assert "no longer manages" in lapsed.value.detail
    assert not Membership.objects.filter(campaign=mine, user=person).exists()


def test_only_a_manager_learns_which_usernames_exist(client, world):
    """A decision (accounts.add_members): the people page names the usernames that match no account, so that a
    manager tells a typo from a person who has not answered yet; nobody else gets an answer that differs by name."""
    admin, boss, mine, theirs = world
    person = person_holding("annotator", admin, theirs)
    members = f"/manage/campaigns/{mine.pk}/members/"
    client.force_login(boss)
    page = client.post(members, {"m-usernames": "nobody-here", "m-role": "annotator", "add": ""}).content.decode()
    assert "No account nobody-here." in page
    client.force_login(User.objects.create_user("curious"))
    answers = [client.post(members, {"m-usernames": name, "m-role": "annotator", "add": ""})
               for name in (person.username, "nobody-here")]
    assert [a.status_code for a in answers] == [403, 403]
    assert person.username not in answers[0].content.decode() and "nobody-here" not in answers[1].content.decode()
    assert "No account" not in answers[1].content.decode()
