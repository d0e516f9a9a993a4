"""Sign-in throttling: after LOGIN_FAILURE_LIMIT failed attempts for one username from one address
within the window, further attempts are refused until the window has passed.

The counts live in the shared cache (Redis in production). When the cache is unreachable, sign-in
goes on unthrottled rather than failing for everyone: an outage of the cache must not lock every
annotator out, and passwords are still checked."""
import hashlib
import logging
import time

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)


def _key(username, address):
    digest = hashlib.sha256(f"{(username or '').lower()}|{address}".encode()).hexdigest()[:32]
    return f"login-failures:{digest}"


def client_address(request):
    return request.META.get("REMOTE_ADDR", "")


def _failures(key):
    try:
        return cache.get(key) or []
    except Exception as error:  # noqa: BLE001 (each cache backend raises its own connection errors)
        logger.warning("sign-in throttling skipped, the cache is unreachable: %r", error)
        return []


def _write(operation, *args):
    try:
        operation(*args)
    except Exception as error:  # noqa: BLE001 (as in _failures)
        logger.warning("sign-in throttling not updated, the cache is unreachable: %r", error)


def seconds_blocked(username, address):
    """Seconds until another attempt is allowed, or 0."""
    failures = _failures(_key(username, address))
    now = time.time()
    recent = [t for t in failures if now - t < settings.LOGIN_FAILURE_WINDOW_SECONDS]
    if len(recent) < settings.LOGIN_FAILURE_LIMIT:
        return 0
    return int(settings.LOGIN_FAILURE_WINDOW_SECONDS - (now - recent[0])) + 1


def record_failure(username, address):
    key = _key(username, address)
    now = time.time()
    failures = [t for t in _failures(key) if now - t < settings.LOGIN_FAILURE_WINDOW_SECONDS]
    _write(cache.set, key, failures + [now], settings.LOGIN_FAILURE_WINDOW_SECONDS)


def clear_failures(username, address):
    _write(cache.delete, _key(username, address))
