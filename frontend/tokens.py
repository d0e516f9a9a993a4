"""API tokens: they expire API_TOKEN_DAYS after they were issued, and a password change deletes them.

A token is a password stand-in: one taken from a laptop or a log must not work for ever, and someone
who changes their password after a leak must be able to count on every old token being dead."""
from datetime import timedelta
from functools import cache

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

from core import sql


def expires_at(token):
    return token.created + timedelta(days=settings.API_TOKEN_DAYS)


def is_expired(token, now=None):
    return (now or timezone.now()) >= expires_at(token)


def issue_token(user):
    """The user's token, a new one when the old one has expired."""
    token = Token.objects.filter(user=user).first()
    if token is not None and is_expired(token):
        Token.objects.filter(pk=token.pk).delete()
        token = None
    if token is not None:
        return token
    try:
        with transaction.atomic():
            return Token.objects.create(user=user)
    except IntegrityError:  # a sign-in sent beside this one issued it first: both get that one
        return Token.objects.get(user=user)


@cache
def _token_sql():
    user = get_user_model()
    return (f"SELECT {sql.columns(Token, 't')}, {sql.columns(user, 'u')} FROM {Token._meta.db_table} t "
            f"INNER JOIN {user._meta.db_table} u ON t.user_id = u.id WHERE t.key = %s")


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing tokens past their lifetime with the code `token_expired`."""

    def authenticate_credentials(self, key):
        # DRF's statement (the token with its user), kept as text: every API request runs it (see core.sql).
        row = sql.fetch_one(_token_sql(), [key])
        if row is None:
            raise AuthenticationFailed(_("Invalid token."))
        token, at = sql.instance(Token, row)
        token.user, _end = sql.instance(get_user_model(), row, at)
        user = token.user
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        if is_expired(token):
            raise AuthenticationFailed({"code": "token_expired",
                                        "detail": f"This token expired on {expires_at(token):%Y-%m-%d %H:%M} UTC; "
                                                  "sign in again for a new one."})
        return user, token


def revoke_tokens(user) -> int:
    """End the person's API tokens (sign-out offers it): a script using one is refused from then on."""
    return Token.objects.filter(user=user).delete()[0]


@receiver(post_save, sender=get_user_model(), dispatch_uid="tokens-die-with-the-password")
def delete_tokens_on_password_change(sender, instance, **kwargs):
    # set_password() keeps the new raw password on the instance until the save that stores it.
    if getattr(instance, "_password", None) is not None:
        Token.objects.filter(user=instance).delete()
