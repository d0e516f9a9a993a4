"""A production deployment on a Redis broker is warned (manage.py check, migrate) when report limits would be
counted in a cache of each host's own: several web hosts would each allow a person the whole rate."""
from reports.limits import shared_cache_check

FILE_CACHE = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": "/tmp/x"}}
REDIS_CACHE = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://r/1"}}


def test_production_on_redis_without_a_redis_cache_is_warned(settings):
    settings.PRODUCTION, settings.CELERY_BROKER_URL, settings.CACHES = True, "redis://r/0", FILE_CACHE
    assert [w.id for w in shared_cache_check()] == ["reports.W001"]


def test_a_redis_cache_or_one_machine_is_not(settings):
    settings.PRODUCTION, settings.CELERY_BROKER_URL, settings.CACHES = True, "redis://r/0", REDIS_CACHE
    assert shared_cache_check() == []
    settings.CELERY_BROKER_URL, settings.CACHES = "filesystem://", FILE_CACHE  # the embedded, one-machine default
    assert shared_cache_check() == []
    settings.PRODUCTION, settings.CELERY_BROKER_URL = False, "redis://r/0"
    assert shared_cache_check() == []
