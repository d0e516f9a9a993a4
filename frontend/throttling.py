"""Sign-in throttling, one throttle for every check of a person's password: the site's sign-in page, the
admin's, the API token endpoint and the change-password page's old password.

Counters of failed attempts in the database (`SignInAttempts`: every web process shares them), each a window
of LOGIN_FAILURE_WINDOW_SECONDS or of the `login` rate's duration:
- per account, whatever the address: after LOGIN_FAILURE_LIMIT failures for one username, further attempts
  on it are refused unchecked until the window has passed, however many addresses they come from. The
  username is normalised exactly as authentication normalises it (Django's UsernameField: surrounding
  whitespace stripped, Unicode NFKC) and case-folded, so that " victim", "VICTIM" and full-width letters all
  count against "victim".
- per address: the configured `login` rate (REST_FRAMEWORK DEFAULT_THROTTLE_RATES, e.g. "10/min") bounds the
  failed attempts from one address whatever the usernames, so that guessing across many accounts is refused.
- per known browser: a browser in which the person signed in before carries a signed cookie naming the account
  (KNOWN_DEVICE_COOKIE). Its attempts on that account are counted on its own counter instead of the two above,
  so that other people's failures (an attacker's guesses at the account, or at anything from a shared
  address) never refuse the person's right password there.

Only failures count. While a password is being checked its attempt holds a place on its counters
(`in_flight`): an attempt starts only while failures and attempts in flight together are under the limit, and
waits for a place otherwise, so that however many arrive at once at most the limit are checked before the
failures are known, and right passwords sent at once are all checked in turn, none refused. A right password
forgets the failures of its account (or its browser), never those of its address. A refused attempt answers 429 with
Retry-After (the seconds left in the window) and is not checked at all.

The client's address is REMOTE_ADDR, or, when the request comes from a proxy the operator declared
(TRUSTED_PROXIES, HB_TRUSTED_PROXIES), the address that proxy forwarded in X-Forwarded-For."""
import hashlib
import ipaddress
import math
import time
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.forms import UsernameField
from django.core import signing
from django.db import transaction
from django.utils import timezone
from rest_framework.throttling import SimpleRateThrottle

from .models import SignInAttempts

KNOWN_DEVICE_COOKIE = "hb_known_device"
KNOWN_DEVICE_SALT = "frontend.throttling.known-device"
KNOWN_DEVICE_DAYS = 365
ADDRESS_PREFIX = "login-address:"
WAIT_STEP_S = 0.05  # how often an attempt waiting for a place on its counters looks again


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


def _account_key(username):
    return f"login-account:{_digest(normalise_username(username))}"


def _address_key(address):
    return f"{ADDRESS_PREFIX}{_digest(address)}"


def _device_key(device):
    return f"login-device:{_digest(device)}"


# --------------------------------------------------------------------------------------------- the address

def _networks(entries):
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            continue
    return networks


def _address(text):
    try:
        address = ipaddress.ip_address(text.strip().split("%")[0])
    except ValueError:
        return None
    return getattr(address, "ipv4_mapped", None) or address


def _trusted(address, networks):
    return address is not None and any(address.version == net.version and address in net for net in networks)


def client_address(request):
    """The address of the person: REMOTE_ADDR, unless it is a proxy the operator declared (TRUSTED_PROXIES); then
    X-Forwarded-For read from the right, past every declared proxy, to the first address none of them is (what a
    client wrote further left is not believed)."""
    remote = request.META.get("REMOTE_ADDR", "")
    networks = _networks(settings.TRUSTED_PROXIES)
    if not networks or not _trusted(_address(remote), networks):
        return remote
    hops = [hop for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            break  # a hop that is no address: nothing further left can be believed
        if not _trusted(address, networks):
            return str(address)
    return remote


# --------------------------------------------------------------------------------------------- known browsers

def known_device(request, username):
    """The id of this browser's sign-in cookie when it names this account (signed by this server), else None."""
    value = request.COOKIES.get(KNOWN_DEVICE_COOKIE)
    if not value:
        return None
    try:
        found = signing.loads(value, salt=KNOWN_DEVICE_SALT, max_age=KNOWN_DEVICE_DAYS * 86400)
    except signing.BadSignature:
        return None
    if not isinstance(found, dict) or found.get("account") != normalise_username(username):
        return None
    return value


def remember_device(response, username):
    """Mark the browser the person just signed in with as theirs (the cookie of `known_device`)."""
    if hasattr(response, "set_cookie"):
        value = signing.dumps({"account": normalise_username(username), "at": time.time()}, salt=KNOWN_DEVICE_SALT)
        response.set_cookie(KNOWN_DEVICE_COOKIE, value, max_age=KNOWN_DEVICE_DAYS * 86400, httponly=True,
                            secure=settings.SESSION_COOKIE_SECURE, samesite="Lax")


# --------------------------------------------------------------------------------------------- counting

def _limits():
    """(limit, window) per account (and per known browser), and for the address (None without a `login` rate)."""
    rate = SignInRate()
    per_account = (settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_FAILURE_WINDOW_SECONDS)
    per_address = (rate.num_requests, rate.duration) if rate.rate else None
    return per_account, per_address


def counters(request, username):
    """The counters an attempt on this account from this request counts on: [(key, limit, window)]."""
    per_account, per_address = _limits()
    device = known_device(request, username)
    if device:
        return [(_device_key(device), *per_account)]
    keys = [(_account_key(username), *per_account)]
    if per_address:
        keys.append((_address_key(client_address(request)), *per_address))
    return keys


def _try_take(keys, now):
    """In one transaction, the counters locked in key order: the seconds to wait when one of them is over its
    limit of failures (refuse); None when the failures and attempts in flight fill a counter (wait for a place);
    else 0, with a place taken on each."""
    with transaction.atomic():
        rows = []
        for key, limit, window in sorted(keys):
            row, _ = SignInAttempts.objects.select_for_update().get_or_create(
                key=key, defaults={"count": 0, "in_flight": 0, "window_ends": now + timedelta(seconds=window)})
            if row.window_ends <= now:
                row.count, row.in_flight, row.window_ends = 0, 0, now + timedelta(seconds=window)
            if row.count >= limit:
                return max(1.0, (row.window_ends - now).total_seconds())
            rows.append((row, limit))
        if any(row.count + row.in_flight >= limit for row, limit in rows):
            return None
        for row, _ in rows:
            row.in_flight += 1
            row.save(update_fields=["count", "in_flight", "window_ends"])
    return 0


def take_attempt(keys):
    """Wait for a place on every counter (at most LOGIN_WAIT_SECONDS); the seconds to wait when a counter is over
    its limit of failures (the attempt is then refused unchecked), else 0 (a place is taken: `settle` frees it)."""
    now = timezone.now()
    with transaction.atomic():  # windows that have passed; rows another attempt holds are left for later
        passed = SignInAttempts.objects.select_for_update(skip_locked=True).filter(window_ends__lt=now)
        SignInAttempts.objects.filter(pk__in=list(passed.values_list("pk", flat=True))).delete()
    deadline = time.monotonic() + settings.LOGIN_WAIT_SECONDS
    while True:
        wait = _try_take(keys, timezone.now())
        if wait is not None:
            return math.ceil(wait) if wait else 0
        if time.monotonic() >= deadline:
            return 1  # attempts in flight still fill the counter: ask again in a second
        time.sleep(WAIT_STEP_S)


def settle(keys, failed):
    """The attempt's place is freed; a failure is counted, a right password forgets its account's failures (not its
    address's: those may be someone else's). Row by row in key order, as places are taken, so that
    two attempts never wait on each other's rows."""
    with transaction.atomic():
        for row in SignInAttempts.objects.select_for_update().filter(key__in=[key for key, _, _ in keys]) \
                .order_by("key"):
            row.in_flight = max(0, row.in_flight - 1)
            if failed:
                row.count += 1
            elif not row.key.startswith(ADDRESS_PREFIX):
                row.count = 0  # the person's right password forgets the account's (or the browser's) failures
            row.save(update_fields=["count", "in_flight"])


def guard(request, username, attempt, refuse):
    """Run one check of `username`'s password under the throttle.

    attempt() returns (response, right): whether the password was right; refuse(wait) returns the 429 response to
    send instead of checking the password at all. A right password marks the browser as the account's
    (`remember_device`)."""
    keys = counters(request, username)
    wait = take_attempt(keys)
    if wait:
        response = refuse(wait)
        response.status_code = 429
        response["Retry-After"] = str(wait)
        return response
    answered = right = False
    try:
        response, right = attempt()
        answered = True
    finally:
        settle(keys, failed=answered and not right)  # a server error is no failure of the person's
    if right:
        remember_device(response, username)
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
