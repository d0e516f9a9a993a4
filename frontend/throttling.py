"""Sign-in throttling, one throttle for every sign-in path (the site's sign-in page, the admin's and the
API token endpoint).

Two counters of failed attempts, in the shared cache (Redis in production):
- per username: after LOGIN_FAILURE_LIMIT failures for one username from one address within
  LOGIN_FAILURE_WINDOW_SECONDS, that username is refused from that address until the window has
  passed. The username is normalised exactly as authentication normalises it (Django's
  UsernameField: surrounding whitespace stripped, Unicode NFKC) and case-folded, so that " victim",
  "victim\\t", "VICTIM" and full-width letters all count against "victim".
- per address: the configured `login` rate (REST_FRAMEWORK DEFAULT_THROTTLE_RATES, e.g. "10/min")
  bounds the failed attempts from one address whatever the usernames, so that guessing across many
  accounts is refused too.

A refused attempt answers 429 with Retry-After and is not checked at all. When the cache is
unreachable, sign-in goes on unthrottled rather than failing for everyone: an outage of the cache
must not lock every annotator out, and passwords are still checked."""
import hashlib
import logging
import time

from django.conf import settings
from django.contrib.auth.forms import UsernameField
from django.core.cache import cache
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)


class SignInRate(SimpleRateThrottle):
    """The configured `login` rate, read when used (num_requests per duration seconds)."""

    scope = "login"

    def get_rate(self):
        return settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get(self.scope)


def normalise_username(raw):
    """The username as authentication reads it (UsernameField: str, stripped, NFKC), case-folded."""
    if not isinstance(raw, str):
        return ""
    return (UsernameField().to_python(raw) or "").casefold()


def _digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _user_key(username, address):
    return f"login-failures:{_digest(f'{normalise_username(username)}|{address}')}"


def _address_key(address):
    return f"login-failures-address:{_digest(address)}"


def client_address(request):
    return request.META.get("REMOTE_ADDR", "")


def _failures(key, window):
    try:
        failures = cache.get(key) or []
    except Exception as error:  # noqa: BLE001 (each cache backend raises its own connection errors)
        logger.warning("sign-in throttling skipped, the cache is unreachable: %r", error)
        return []
    now = time.time()
    return [t for t in failures if now - t < window]


def _write(operation, *args):
    try:
        operation(*args)
    except Exception as error:  # noqa: BLE001 (as in _failures)
        logger.warning("sign-in throttling not updated, the cache is unreachable: %r", error)


def _limits():
    """(key function, limit, window) per counter."""
    rate = SignInRate()
    per_user = (settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_FAILURE_WINDOW_SECONDS)
    per_address = (rate.num_requests, rate.duration) if rate.rate else None
    return per_user, per_address


def _wait(failures, limit, window):
    if len(failures) < limit:
        return 0
    return int(window - (time.time() - failures[-limit])) + 1


def seconds_blocked(username, address):
    """Seconds until another attempt is allowed for this username from this address, or 0."""
    (user_limit, user_window), per_address = _limits()
    wait = _wait(_failures(_user_key(username, address), user_window), user_limit, user_window)
    if per_address:
        limit, window = per_address
        wait = max(wait, _wait(_failures(_address_key(address), window), limit, window))
    return wait


def record_failure(username, address):
    (_, user_window), per_address = _limits()
    counters = [(_user_key(username, address), user_window)]
    if per_address:
        counters.append((_address_key(address), per_address[1]))
    for key, window in counters:
        _write(cache.set, key, _failures(key, window) + [time.time()], window)


def clear_failures(username, address):
    """A successful sign-in forgets the username's failures (the address's stay counted)."""
    _write(cache.delete, _user_key(username, address))


def guard(request, username, attempt, refuse):
    """Run one sign-in attempt under the throttle.

    attempt() returns (response, signed_in); refuse(wait) returns the 429 response to send instead of
    checking the password at all."""
    address = client_address(request)
    wait = seconds_blocked(username, address)
    if wait:
        response = refuse(wait)
        response.status_code = 429
        response["Retry-After"] = str(wait)
        return response
    response, signed_in = attempt()
    (clear_failures if signed_in else record_failure)(username, address)
    return response


def throttled_sign_in(view, refuse):
    """A Django sign-in view (a LoginView: a redirect means signed in) under the throttle."""

    def guarded(request, *args, **kwargs):
        if request.method != "POST":
            return view(request, *args, **kwargs)

        def attempt():
            response = view(request, *args, **kwargs)
            return response, response.status_code in (301, 302, 303) and request.user.is_authenticated

        return guard(request, request.POST.get("username", ""), attempt, lambda wait: refuse(request, wait))

    return guarded
