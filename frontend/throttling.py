"""Sign-in throttling: after LOGIN_FAILURE_LIMIT failed attempts for one username from one address
within the window, further attempts are refused until the window has passed."""
import hashlib
import time

from django.conf import settings
from django.core.cache import cache


def _key(username, address):
    digest = hashlib.sha256(f"{(username or '').lower()}|{address}".encode()).hexdigest()[:32]
    return f"login-failures:{digest}"


def client_address(request):
    return request.META.get("REMOTE_ADDR", "")


def seconds_blocked(username, address):
    """Seconds until another attempt is allowed, or 0."""
    failures = cache.get(_key(username, address)) or []
    now = time.time()
    recent = [t for t in failures if now - t < settings.LOGIN_FAILURE_WINDOW_SECONDS]
    if len(recent) < settings.LOGIN_FAILURE_LIMIT:
        return 0
    return int(settings.LOGIN_FAILURE_WINDOW_SECONDS - (now - recent[0])) + 1


def record_failure(username, address):
    key = _key(username, address)
    now = time.time()
    failures = [t for t in (cache.get(key) or []) if now - t < settings.LOGIN_FAILURE_WINDOW_SECONDS]
    cache.set(key, failures + [now], settings.LOGIN_FAILURE_WINDOW_SECONDS)


def clear_failures(username, address):
    cache.delete(_key(username, address))
