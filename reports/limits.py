"""Limits on report generation per user: reports are computed per request (seconds of CPU each), so one
user may have at most REPORT_CONCURRENCY_PER_USER reports computing at once and start at most
REPORT_RATE of them (settings); beyond either the answer is 429 with Retry-After. The counters live in
Django's cache (Redis in production, shared by every web process and host: `shared_cache_check` warns where a
production deployment has none); when the cache is unreachable, reports are served unlimited rather than refused
for everyone."""
import logging
from contextlib import contextmanager

from django.conf import settings
from django.core import checks
from django.core.cache import cache
from rest_framework.throttling import UserRateThrottle

from core.errors import ActionError, Code

logger = logging.getLogger(__name__)
# A slot held by a process that died is forgotten after this long.
SLOT_TTL_S = 600
BUSY_RETRY_AFTER_S = 5


class ReportBusy(ActionError):
    def __init__(self, detail, retry_after):
        self.retry_after = max(1, int(retry_after))
        super().__init__(Code.TOO_MANY_REPORTS, detail, retry_after=self.retry_after)


class ReportRateThrottle(UserRateThrottle):
    scope = "report"

    def get_rate(self):
        return settings.REPORT_RATE


def _running_key(user):
    return f"reports-running:{user.pk}"


@contextmanager
def report_slot(request):
    """Hold one of the signed-in user's report slots while a report is computed; ReportBusy when the user
    is over the rate or already has REPORT_CONCURRENCY_PER_USER reports computing."""
    user, key, held = request.user, _running_key(request.user), False
    try:
        throttle = ReportRateThrottle()
        if not throttle.allow_request(request, None):
            raise ReportBusy(f"At most {settings.REPORT_RATE} reports per user; try again in "
                             f"{int(throttle.wait() or 1)} seconds.", throttle.wait() or 1)
        cache.add(key, 0, SLOT_TTL_S)
        running = cache.incr(key)
        held = True
        if running > settings.REPORT_CONCURRENCY_PER_USER:
            raise ReportBusy(f"{settings.REPORT_CONCURRENCY_PER_USER} of your reports are being computed already; "
                             f"try again in a few seconds.", BUSY_RETRY_AFTER_S)
    except ReportBusy:
        _release(key, held)
        raise
    except Exception as error:  # noqa: BLE001 (each cache backend raises its own connection errors)
        logger.warning("report limits skipped for %s, the cache is unreachable: %r", user, error)
    try:
        yield
    finally:
        _release(key, held)


def _release(key, held):
    if not held:
        return
    try:
        cache.decr(key)
    except Exception as error:  # noqa: BLE001 (a missing key, an unreachable cache)
        logger.warning("report slot not released: %r", error)


def shared_cache_check(app_configs=None, **kwargs):
    """A production deployment on a Redis broker with no Redis cache (CACHE_URL): each host then counts report
    limits in a file cache of its own data folder, and a person gets the whole rate from every host."""
    backend = settings.CACHES["default"]["BACKEND"]
    if settings.PRODUCTION and settings.CELERY_BROKER_URL.startswith("redis") and "redis" not in backend.lower():
        kind = backend.rsplit(".", 1)[-1]
        return [checks.Warning(f"report limits are counted in a cache of this host's own ({kind}), not shared with "
                               "other web hosts",
                               hint="Set CACHE_URL to a Redis database (deploy/env.example: redis://redis:6379/1).",
                               id="reports.W001")]
    return []
