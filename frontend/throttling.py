"""Sign-in throttling, one throttle for every sign-in path (the site's sign-in page, the admin's and the
API token endpoint).

Two counters of attempts, in the database (`SignInAttempts`), each counted before the password is checked:
- per username: after LOGIN_FAILURE_LIMIT failures for one username from one address within
  LOGIN_FAILURE_WINDOW_SECONDS, that username is refused from that address until the window has
  passed. The username is normalised exactly as authentication normalises it (Django's
  UsernameField: surrounding whitespace stripped, Unicode NFKC) and case-folded, so that " victim",
  "victim\\t", "VICTIM" and full-width letters all count against "victim".
- per address: the configured `login` rate (REST_FRAMEWORK DEFAULT_THROTTLE_RATES, e.g. "10/min")
  bounds the failed attempts from one address whatever the usernames, so that guessing across many
  accounts is refused too.

An attempt is counted first, in a transaction that locks the counter's row, and only an attempt within the
limit has its password checked: attempts sent at once are counted one after the other, so that however many
arrive together, at most the limit are checked. A window starts with its first attempt; a successful sign-in
forgets the username's counter and does not count against the address. A refused attempt answers 429 with
Retry-After (the seconds left in the window) and is not checked at all."""
import hashlib
import math
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.forms import UsernameField
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from rest_framework.throttling import SimpleRateThrottle

from .models import SignInAttempts


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


def _limits():
    """(limit, window) per username, and for the address (None without a `login` rate)."""
    rate = SignInRate()
    per_user = (settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_FAILURE_WINDOW_SECONDS)
    per_address = (rate.num_requests, rate.duration) if rate.rate else None
    return per_user, per_address


def _count(key, window, now):
    """One more attempt on the key's counter (a new window when the last one has passed): (attempts in the
    window, this one included; seconds left in it). The row stays locked until the count is written."""
    with transaction.atomic():
        row, created = SignInAttempts.objects.select_for_update().get_or_create(
            key=key, defaults={"count": 1, "window_ends": now + timedelta(seconds=window)})
        if not created:
            if row.window_ends <= now:
                row.count, row.window_ends = 1, now + timedelta(seconds=window)
            else:
                row.count += 1
            row.save(update_fields=["count", "window_ends"])
    return row.count, (row.window_ends - now).total_seconds()


def take_attempt(username, address):
    """Count one attempt for this username from this address, and for the address; the seconds to wait when
    either is over its limit (the attempt is then refused unchecked), else 0."""
    now = timezone.now()
    SignInAttempts.objects.filter(window_ends__lt=now).delete()  # windows that have passed
    (user_limit, user_window), per_address = _limits()
    wait = 0.0
    count, left = _count(_user_key(username, address), user_window, now)
    if count > user_limit:
        wait = left
    if per_address:
        limit, window = per_address
        count, left = _count(_address_key(address), window, now)
        if count > limit:
            wait = max(wait, left)
    return math.ceil(wait) if wait else 0


def forgive(username, address):
    """A successful sign-in: the username's counter is forgotten and the attempt not held against the address."""
    SignInAttempts.objects.filter(key=_user_key(username, address)).delete()
    SignInAttempts.objects.filter(key=_address_key(address), count__gt=0).update(count=F("count") - 1)


def guard(request, username, attempt, refuse):
    """Run one sign-in attempt under the throttle.

    attempt() returns (response, signed_in); refuse(wait) returns the 429 response to send instead of
    checking the password at all."""
    address = client_address(request)
    wait = take_attempt(username, address)
    if wait:
        response = refuse(wait)
        response.status_code = 429
        response["Retry-After"] = str(wait)
        return response
    response, signed_in = attempt()
    if signed_in:
        forgive(username, address)
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
