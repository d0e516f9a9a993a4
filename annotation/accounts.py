"""People of a campaign, in bulk: new accounts with one-time passwords, members added or removed by
username. Each is one transaction that writes everything or nothing, with its events."""
import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from benchmarks.permissions import staff_or_holder

from .actions import add_member, record_event, require_role, set_member_active
from core.errors import ActionError, Code
from .models import EventKind, Membership, Role


def may_create_accounts(user):
    """Staff, or holders of auth.add_user."""
    return staff_or_holder(user, "auth.add_user")


@dataclass(frozen=True)
class NewAccount:
    username: str
    email: str
    password: str  # shown once to the manager; only its hash is stored


def one_time_password():
    return secrets.token_urlsafe(12)


def _refuse(problems):
    raise ActionError(Code.INVALID_ACCOUNTS, "Nothing was changed: " + " ".join(problems),
                      errors=problems)


def _check_role(role):
    if role not in Role.values:
        _refuse([f"Unknown role {role!r}; expected one of {Role.values}."])


def create_accounts(campaign, *, actor, people, role):
    """New accounts for [(username, email)] with `role` in the campaign. Refuses the whole list when a line is
    wrong (a bad or taken username, a bad email, a name twice); returns NewAccounts with their passwords."""
    if not may_create_accounts(actor):
        raise ActionError(Code.FORBIDDEN, "Only staff or holders of auth.add_user may create accounts.")
    require_role(actor, campaign, {Role.MANAGER}, "give roles")
    _check_role(role)
    User = get_user_model()
    username_field = User._meta.get_field(User.USERNAME_FIELD)
    problems, seen = [], set()
    for number, (username, email) in enumerate(people, start=1):
        try:
            username_field.run_validators(username)
            if not username:
                raise ValidationError("a username is required")
        except ValidationError as error:
            problems.append(f"Line {number}: username {username!r}: {' '.join(error.messages)}")
            continue
        if username.lower() in seen:
            problems.append(f"Line {number}: {username} is listed twice.")
        seen.add(username.lower())
        if User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": username}).exists():
            problems.append(f"Line {number}: an account {username} exists already; add it as a member instead.")
        if email:
            try:
                validate_email(email)
            except ValidationError:
                problems.append(f"Line {number}: {email!r} is not an email address.")
    if not people:
        problems.append("No usernames given.")
    if problems:
        _refuse(problems)
    created = []
    with transaction.atomic():
        for username, email in people:
            password = one_time_password()
            user = User.objects.create_user(username, email=email or "", password=password)
            add_member(campaign, actor=actor, user=user, role=role)
            created.append(NewAccount(username, email or "", password))
        record_event(campaign, EventKind.ACCOUNTS_CREATED, actor=actor,
                     figures={"usernames": [a.username for a in created], "role": role})
    return created


def _users_named(usernames):
    User = get_user_model()
    return {u.get_username(): u for u in User.objects.filter(**{f"{User.USERNAME_FIELD}__in": usernames})}


def add_members(campaign, *, actor, usernames, role):
    """Give existing accounts a role in the campaign (or give it back); all or nothing."""
    require_role(actor, campaign, {Role.MANAGER}, "add members")
    _check_role(role)
    if not usernames:
        _refuse(["No usernames given."])
    users = _users_named(usernames)
    problems = [f"No account {name}." for name in usernames if name not in users]
    active = set(Membership.objects.filter(campaign=campaign, role=role, active=True,
                                           user__in=users.values()).values_list("user_id", flat=True))
    problems += [f"{name} is already {role} in this campaign." for name in usernames
                 if name in users and users[name].pk in active]
    if problems:
        _refuse(problems)
    with transaction.atomic():
        return [add_member(campaign, actor=actor, user=users[name], role=role) for name in usernames]


def remove_members(campaign, *, actor, usernames, role):
    """Take a role away (the membership is deactivated: labels and events keep pointing at the person)."""
    require_role(actor, campaign, {Role.MANAGER}, "change members")
    _check_role(role)
    if not usernames:
        _refuse(["No usernames given."])
    memberships = {m.user.get_username(): m for m in
                   Membership.objects.filter(campaign=campaign, role=role, active=True).select_related("user", "campaign")}
    problems = [f"{name} is not an active {role} of this campaign." for name in usernames
                if name not in memberships]
    if problems:
        _refuse(problems)
    with transaction.atomic():
        return [set_member_active(memberships[name], actor=actor, active=False) for name in usernames]
