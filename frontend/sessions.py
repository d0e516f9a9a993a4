"""The signed-in person on every page request, read as the token authentication reads it (frontend/tokens.py):
statements kept as SQL text (see core.sql), so that the annotation page's requests, which sign in with the session
cookie, do not pay the ORM's compile twice per request where an API client's token costs one prepared statement.

SESSION_ENGINE = "frontend.sessions" and AUTHENTICATION_BACKENDS name this module's classes (config/settings.py);
both keep Django's behaviour, rows and checks (expiry, is_active, the session's password hash)."""
import logging
from functools import cache
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation, ValidationError
from django.utils import timezone

from core import sql


@cache
def _session_sql(model):
    return f"SELECT s.session_data FROM {model._meta.db_table} s WHERE s.session_key = %s AND s.expire_date > %s"


@cache
def _user_sql():
    user = get_user_model()
    return f"SELECT {sql.columns(user, 'u')} FROM {user._meta.db_table} u WHERE u.{user._meta.pk.column} = %s"


class SessionStore(db.SessionStore):
    """Django's database sessions; the read on every request is one prepared statement."""

    def _get_session_from_db(self):
        try:
            row = sql.fetch_one(_session_sql(self.model), sql.params(self.session_key, timezone.now()))
        except SuspiciousOperation as e:
            logging.getLogger(f"django.security.{e.__class__.__name__}").warning(str(e))
            row = None
        if row is None:
            self._session_key = None
            return None
        return SimpleNamespace(session_data=row[0])


class UserBackend(ModelBackend):
    """Django's ModelBackend; the signed-in person is read with one prepared statement."""

    def get_user(self, user_id):
        model = get_user_model()
        try:
            user_id = model._meta.pk.to_python(user_id)
        except ValidationError:  # a session written for another user model
            return None
        row = sql.fetch_one(_user_sql(), [user_id])
        if row is None:
            return None
        user, _end = sql.instance(model, row)
        return user if self.user_can_authenticate(user) else None
