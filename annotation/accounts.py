"""People of a campaign, in bulk: new accounts with one-time passwords, members added or removed by
username, a member's password reset to a new one-time password. Each is one transaction that writes
everything or nothing, with its events.

A one-time password is one: its holder is marked (`OneTimePassword`) until they choose their own
(`password_changed`), and nothing but the change-password page opens for them meanwhile.

Usernames that look alike are refused wherever an account is made or renamed (`check_username`): two
names whose confusable skeletons (Unicode TR39: each character replaced by the prototype of the
characters it can be confused with) are equal would show one person's work under another's name, as
`аdmin` (Cyrillic a) for `admin` or `victіm` (Ukrainian i) for `victim`."""
import secrets
import unicodedata
from dataclasses import dataclass
from functools import cache

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models.signals import pre_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

from benchmarks.permissions import staff_or_holder
from core.errors import ActionError, Code

from .actions import add_member, invite_member, record_event, require_role, set_member_active
from .actions.campaigns import needs_acceptance
from .models import EventKind, Membership, OneTimePassword, Role
from .policy import account_reach


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


@cache
def _prototypes() -> dict[str, str]:
    """{character: its TR39 prototype} from the Unicode confusables table as confusable_homoglyphs ships it.

    That table holds each pair of confusables.txt both ways round, so the direction is read back from its shape:
    a source is one code point with exactly one entry, its prototype, while a prototype lists all its sources
    (a string of several code points is always a prototype, as a source is one code point). Where a prototype
    has a single source the two list each other only; both then map to the lower one, which keeps the classes
    that equal skeletons compare, if not the table's own choice of prototype."""
    from confusable_homoglyphs import confusables

    table: dict[str, list[str]] = {}
    for key, entries in confusables.confusables_data.items():
        # Right-to-left characters come wrapped in left-to-right marks (from the table's comments).
        table.setdefault(key.replace("\u200e", ""), []).extend(e["c"].replace("\u200e", "") for e in entries)
    prototypes = {}
    for char, others in table.items():
        if len(char) != 1 or len(set(others)) != 1:
            continue
        other = others[0]
        if len(other) > 1 or len(set(table.get(other, ()))) > 1:
            prototypes[char] = other
        elif other != char:
            prototypes[char] = min(char, other)
    return prototypes


def skeleton(text: str) -> str:
    """TR39's skeleton: NFD, each character replaced by its prototype, NFD again."""
    prototypes = _prototypes()
    mapped = "".join(prototypes.get(char, char) for char in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", "".join(prototypes.get(char, char) for char in mapped))


def lookalike_keys(username: str) -> set[str]:
    """The skeletons a username is compared by: as written and case-folded (NFKC first, as Django stores names),
    so that `VICTIM`, `Admin` and `аdmin` all meet the names they imitate."""
    name = unicodedata.normalize("NFKC", username or "")
    return {skeleton(name), skeleton(name.casefold())}


def lookalike_of(username: str, *, exclude_pk=None) -> str | None:
    """An existing account's username that looks like `username` (not the account `exclude_pk` itself), or None."""
    User = get_user_model()
    keys = lookalike_keys(username)
    others = User.objects.exclude(pk=exclude_pk) if exclude_pk is not None else User.objects.all()
    for other in others.values_list(User.USERNAME_FIELD, flat=True).iterator():
        if other != username and keys & lookalike_keys(other):
            return other
    return None


def check_username(username: str, *, exclude_pk=None) -> None:
    """ValidationError when the username looks like another account's (the one rule for every way in)."""
    if (other := lookalike_of(username, exclude_pk=exclude_pk)) is not None:
        raise ValidationError(f"{username!r} looks like the existing account {other!r}; choose a name that "
                              "cannot be mistaken for it.", code="lookalike_username")


@receiver(pre_save, sender=get_user_model(), dispatch_uid="usernames-never-look-alike")
def refuse_lookalike_usernames(sender, instance, update_fields=None, raw=False, **kwargs):
    """The last guard: a save that makes or renames an account (admin, createsuperuser, the shell) refuses a
    look-alike; forms and actions check first to say so in their own words."""
    if raw or (update_fields is not None and sender.USERNAME_FIELD not in update_fields):
        return
    name = instance.get_username()
    if instance.pk is not None and sender.objects.filter(pk=instance.pk, **{sender.USERNAME_FIELD: name}).exists():
        return  # not renamed
    check_username(name, exclude_pk=instance.pk)


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
    problems, seen = [], {}
    for number, (username, email) in enumerate(people, start=1):
        try:
            username_field.run_validators(username)
            if not username:
                raise ValidationError("a username is required")
        except ValidationError as error:
            problems.append(f"Line {number}: username {username!r}: {' '.join(error.messages)}")
            continue
        keys = lookalike_keys(username)
        if twin := next((name for name, known in seen.items() if known & keys), None):
            problems.append(f"Line {number}: {username} is listed twice." if twin.lower() == username.lower() else
                            f"Line {number}: {username!r} looks like {twin!r}, listed above.")
        seen[username] = keys
        if User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": username}).exists():
            problems.append(f"Line {number}: an account {username} exists already; add it as a member instead.")
        elif (other := lookalike_of(username)) is not None:
            problems.append(f"Line {number}: {username!r} looks like the existing account {other!r}; choose a "
                            "name that cannot be mistaken for it.")
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
            OneTimePassword.objects.create(user=user, set_by=actor)
            add_member(campaign, actor=actor, user=user, role=role)
            created.append(NewAccount(username, email or "", password))
        record_event(campaign, EventKind.ACCOUNTS_CREATED, actor=actor,
                     figures={"usernames": [a.username for a in created], "role": role})
    return created


def _users_named(usernames):
    User = get_user_model()
    return {u.get_username(): u for u in User.objects.filter(**{f"{User.USERNAME_FIELD}__in": usernames})}


@dataclass(frozen=True)
class MembersAdded:
    added: list  # Memberships made or made active
    invited: list  # Invitations pending: people whose accounts are not the manager's alone (policy.account_reach)


def add_members(campaign, *, actor, usernames, role):
    """Give existing accounts a role in the campaign (or give it back); all or nothing. A person the manager may
    not give a role alone (policy.account_reach) is invited instead, and joins by accepting on their own pages.

    A decision: the refusal names the usernames that match no account ("No account X."), which tells a manager
    which usernames exist. A manager adds people by username and must tell a typo from a person who has not
    answered yet (the invitation they see pending would tell it anyway); only a manager of the campaign reaches
    this answer (require_role above; the API checks the role before reading the body), and it says nothing of
    what the account holds elsewhere beyond that it must accept first."""
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
    added, invited = [], []
    with transaction.atomic():
        for name in usernames:
            if needs_acceptance(actor, users[name]) is None:
                added.append(add_member(campaign, actor=actor, user=users[name], role=role))
            else:
                invited.append(invite_member(campaign, actor=actor, user=users[name], role=role))
    return MembersAdded(added, invited)


def remove_members(campaign, *, actor, usernames, role):
    """Take a role away (the membership is deactivated: labels and events keep pointing at the person)."""
    require_role(actor, campaign, {Role.MANAGER}, "change members")
    _check_role(role)
    if not usernames:
        _refuse(["No usernames given."])
    memberships = {m.user.get_username(): m for m in
                   Membership.objects.filter(campaign=campaign, role=role, active=True)
                   .select_related("user", "campaign")}
    problems = [f"{name} is not an active {role} of this campaign." for name in usernames
                if name not in memberships]
    if problems:
        _refuse(problems)
    with transaction.atomic():
        return [set_member_active(memberships[name], actor=actor, active=False) for name in usernames]


def must_change_password(user) -> bool:
    """Whether the person signs in with a password someone else chose (a new account, a reset)."""
    return bool(user and user.is_authenticated and OneTimePassword.objects.filter(user=user).exists())


def password_changed(user):
    """The person chose their own password: the one-time mark goes."""
    OneTimePassword.objects.filter(user=user).delete()


def _reset_refusal(actor, user, campaign):
    """Why `actor` may not reset `user`'s password, or None. A reset hands the actor the account, so a manager
    resets only an account that is theirs alone (policy.account_reach: every role of it in campaigns they manage,
    no site-wide role); the others go to an administrator (staff reset any member's; superusers only by
    superusers) or to the person themselves."""
    if user.pk == actor.pk:
        return "Change your own password on the Change password page."
    if not Membership.objects.filter(campaign=campaign, user=user, active=True).exists():
        return f"{user.get_username()} is not a member of this campaign."
    if user.is_superuser and not actor.is_superuser:
        return f"{user.get_username()} is a superuser; only a superuser may reset that password."
    if (reason := account_reach(actor, user)) is not None:
        return (f"{reason}, so their password is not yours to reset: ask an administrator, or ask "
                f"{user.get_username()} to change it on their Change password page.")
    return None


def reset_password(campaign, *, actor, user):
    """A new one-time password for a member of the campaign, shown once to the manager (returned as a NewAccount);
    the person must change it at their next sign-in, and their API tokens and signed-in sessions end (a session
    holds a hash of the password it was opened with, so the new password ends every old one)."""
    require_role(actor, campaign, {Role.MANAGER}, "reset passwords")
    if (refusal := _reset_refusal(actor, user, campaign)) is not None:
        raise ActionError(Code.FORBIDDEN, refusal)
    password = one_time_password()
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        Token.objects.filter(user=user).delete()
        OneTimePassword.objects.update_or_create(user=user, defaults={"set_by": actor})
        record_event(campaign, EventKind.PASSWORD_RESET, actor=actor, figures={"username": user.get_username()})
    return NewAccount(user.get_username(), user.email or "", password)
