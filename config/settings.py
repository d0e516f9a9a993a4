"""One settings module for every environment; everything that differs comes from the environment.

Embedded default (no variables set): SQLite file and a filesystem broker under the data folder,
so that one machine with nothing else installed runs the whole platform.
Production: HB_PRODUCTION=1 with DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis) and a real
SECRET_KEY; the process refuses to start with the default key.
"""
import os
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default):
    value = os.environ.get(name)
    return [part.strip() for part in value.split(",") if part.strip()] if value else default


DATA_DIR = Path(os.environ.get("HB_DATA_DIR", BASE_DIR / "var")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
# FED, MuTual and other shared corpora are read from here, never copied into the project.
SHARED_DATA_DIR = Path(os.environ.get("HB_SHARED_DATA", BASE_DIR.parent / "shared" / "data")).resolve()
MODEL_CACHE_DIR = Path(os.environ.get("HB_MODEL_CACHE", DATA_DIR / "models")).resolve()

PRODUCTION = env_bool("HB_PRODUCTION")
DEFAULT_SECRET_KEY = "insecure-development-key-change-me"
SECRET_KEY = os.environ.get("SECRET_KEY", DEFAULT_SECRET_KEY)
if PRODUCTION and SECRET_KEY == DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured("HB_PRODUCTION=1 needs SECRET_KEY set in the environment (not the default).")
# Off unless asked for (DEBUG=1), in the local mode too: Django's debug pages list every URL and
# show settings and tracebacks to whoever can reach the port.
DEBUG = env_bool("DEBUG", default=False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "benchmarks",
    "annotation",
    "modeleval",
    "reports",
    "frontend",
    "humanbaseline",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.BodySizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "frontend.middleware.PersonLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "frontend.passwords.PasswordChangeRequiredMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
]

# Every page loads its scripts and styles from this site only: no inline script, so text that
# slipped past escaping still cannot run. The API docs and the exported report loosen this per
# view (config/urls.py, frontend/views.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [SELF],
    },
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'humanbaseline.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (web + worker) share the file: wait for locks instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"timeout": 30, "transaction_mode": "IMMEDIATE"})
# A persistent connection broken by a database restart is replaced at the next request, not failed on;
# on PostgreSQL the check reads the socket instead of sending SELECT 1 (core/postgresql/base.py).
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "core.postgresql"
    # core.sql's statements are prepared on a connection once it has run them this often; empty turns it off
    # (a pooler in transaction mode older than PgBouncer 1.21 cannot keep prepared statements).
    _prepare = os.environ.get("HB_DB_PREPARE_THRESHOLD", "5")
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = int(_prepare) if _prepare else None
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
] if PRODUCTION else []

# A cache shared by every process of a deployment (report limits count across workers).
CACHE_URL = os.environ.get("CACHE_URL", "")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    if CACHE_URL.startswith("redis")
    else {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(DATA_DIR / "cache")}
}
LOGIN_FAILURE_LIMIT = int(os.environ.get("HB_LOGIN_FAILURE_LIMIT", "5"))
LOGIN_FAILURE_WINDOW_SECONDS = int(os.environ.get("HB_LOGIN_FAILURE_WINDOW", "300"))
# How long a sign-in waits for the attempts already being checked on the same account or address (never refused
# for them while the failures are under the limit) before it is asked to try again.
LOGIN_WAIT_SECONDS = float(os.environ.get("HB_LOGIN_WAIT_SECONDS", "20"))
# The reverse proxies in front of the web processes (addresses or networks, comma-separated, e.g. "10.0.0.5" or
# "172.16.0.0/12"): a request from one of them is counted by sign-in throttling under the address the proxy
# forwarded in X-Forwarded-For. Empty (the default): the connection's own address, and the header is ignored.
TRUSTED_PROXIES = env_list("HB_TRUSTED_PROXIES", [])
# Abuse limits (docs/security.md "Abuse limits"). API tokens expire this many days after they were issued.
API_TOKEN_DAYS = int(os.environ.get("HB_API_TOKEN_DAYS", "30"))
# The most rows one page of any API list may carry, whatever ?limit= asks for.
MAX_PAGE_SIZE = int(os.environ.get("HB_MAX_PAGE_SIZE", "500"))
# The largest request body accepted (bytes); a larger one is refused with 413 before it is read.
MAX_BODY_BYTES = int(os.environ.get("HB_MAX_BODY_BYTES", str(5 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES
# Model runs (of every kind) one person may have queued or running at once.
RUNS_PER_PERSON = int(os.environ.get("HB_RUNS_PER_PERSON", "5"))
# Flags from annotators: at most this many on one lease, and this many per person in 24 hours.
FLAGS_PER_LEASE = int(os.environ.get("HB_FLAGS_PER_LEASE", "3"))
FLAGS_PER_PERSON_PER_DAY = int(os.environ.get("HB_FLAGS_PER_DAY", "100"))
# Reports are computed per request: at most this many at once per user, and this rate per user.
REPORT_CONCURRENCY_PER_USER = int(os.environ.get("HB_REPORT_CONCURRENCY", "2"))
REPORT_RATE = os.environ.get("HB_REPORT_RATE", "30/min")
# Reports are computed by a `cpu` worker (reports.store); 1 computes them inside the request instead, for
# a deployment without workers.
REPORTS_COMPUTE_IN_REQUEST = env_bool("HB_REPORTS_IN_REQUEST")
# A process that computes reports keeps the items and predictions of the last benchmark it read (PostgreSQL
# only, reports.kept_rows): a recompute after a label changed reads only what changed. 0 keeps nothing.
REPORTS_KEEP_ROWS = env_bool("HB_REPORTS_KEEP_ROWS", True)

LANGUAGE_CODE = "en"
# The languages of the pages: English, and those of the people the studies employed (DiQAD's and DialogBench's
# Chinese annotators, KoDialogBench's Korean raters). A person's choice is kept on their account
# (frontend.models.Preferences), else their campaign's language (CampaignSettings.language), else the browser's.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文"), ("ko", "한국어")]
LOCALE_PATHS = [BASE_DIR / "frontend" / "locale"]  # the pages' and their scripts' catalogs (makemessages from here)
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Static files come from the apps' folders outside production (no collectstatic for bin/run);
# files at the site's root (/favicon.ico) from frontend/root.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION
WHITENOISE_ROOT = BASE_DIR / "frontend" / "root"
LOGIN_URL = "/accounts/login/"
# Django's database sessions and ModelBackend, with the read that every page request makes (the session, then
# the person) kept as prepared SQL text, as the API's token authentication is (frontend/sessions.py). One backend
# only, so that a wrong password is hashed once; a session signed in before this setting named Django's
# ModelBackend and is asked to sign in again, once.
SESSION_ENGINE = "frontend.sessions"
AUTHENTICATION_BACKENDS = ["frontend.sessions.UserBackend"]
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Production hardening: cookies only over HTTPS, no framing, HSTS when served behind TLS.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = PRODUCTION and env_bool("HB_HTTPS", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if PRODUCTION and env_bool("HB_HTTPS", True):
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "3600"))
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "frontend.tokens.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.JSONBodyParser",
        "config.parsers.FormBodyParser",
        "config.parsers.MultiPartBodyParser",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "config.pagination.CappedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_RATES": {"login": os.environ.get("HB_LOGIN_THROTTLE", "10/min")},
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HumanBaseline API",
    "DESCRIPTION": "Dialogue-evaluation items, human annotation, model runs and human-versus-model reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs list every endpoint and field: for signed-in people (a session or a token) only.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Docs assets are served from the installed package: no CDN is reachable from every deployment.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery. Without CELERY_BROKER_URL the embedded default is a filesystem broker in the data
# folder: no server to install, and a worker started by `manage.py serve` picks the tasks up.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
EMBEDDED_BROKER = CELERY_BROKER_URL.startswith("filesystem://")
if EMBEDDED_BROKER:
    _queue_dir = DATA_DIR / "broker"
    for sub in ("out", "processed", "control"):
        (_queue_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir / "out"),
        "data_folder_out": str(_queue_dir / "out"),
        "processed_folder": str(_queue_dir / "processed"),
        # The exchange tables of broadcast messages (a worker's remote control); kombu's default is
        # `control/` in the working directory, which would put the broker's files in the checkout.
        "control_folder": str(_queue_dir / "control"),
        "store_processed": False,
    }
else:
    # Longer than the longest chunk: a chunk still running is never handed to a second worker. A chunk whose
    # worker was lost does not wait for it: its heartbeat stops and it is sent again (CHUNK_LOST_AFTER_S below).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
    }
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_TASK_ROUTES = {"modeleval.tasks.score_chunk": {"queue": "gpu"}, "reports.tasks.compute_report": {"queue": "cpu"}}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER")
# A chunk being scored beats every CHUNK_HEARTBEAT_S; one silent for CHUNK_LOST_AFTER_S (its worker killed, its
# machine gone) is sent again by beat's sweep every CHUNK_RECLAIM_EVERY_S: a lost worker's chunk comes back within
# about a minute, whatever the broker's visibility timeout.
CHUNK_HEARTBEAT_S = float(os.environ.get("HB_CHUNK_HEARTBEAT", "5"))
CHUNK_LOST_AFTER_S = float(os.environ.get("HB_CHUNK_LOST_AFTER", "30"))
CHUNK_RECLAIM_EVERY_S = float(os.environ.get("HB_CHUNK_RECLAIM_EVERY", "15"))
CELERY_BEAT_SCHEDULE = {
    "reclaim-expired-leases": {"task": "annotation.tasks.reclaim_expired_leases", "schedule": 60.0},
    "reclaim-lost-chunks": {"task": "modeleval.tasks.reclaim_lost_chunks", "schedule": CHUNK_RECLAIM_EVERY_S},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "filters": {"one_line_403": {"()": "config.logfilters.OneLineForbidden"}},
    "loggers": {"django.request": {"filters": ["one_line_403"]}},
}

# Models behind an OpenAI-compatible API (modeleval.apiclient): each request's timeout and its retries
# with exponential backoff on connection errors, 429 and 5xx (a Retry-After header is honoured). Their
# chunks go to the `cpu` queue; the number of requests in flight per chunk is the model's `concurrency`.
# Where a model behind an API may be called, and which environment variables may hold its key (modeleval.endpoints):
# an endpoint's host must be one of HB_API_HOSTS ("api.example.com", "*.example.com" for its subdomains, "*" for
# any public host; "vllm.internal:8000" or "[fd00::5]:8000" on that port only); a host on a private, loopback or
# link-local address only with HB_API_ALLOW_PRIVATE=1, judged on the address each connection uses. A key
# variable must start with HB_API_KEY_ENV_PREFIX or be one of HB_API_KEY_ENVS, so that no other server secret
# (SECRET_KEY, DATABASE_URL) can be sent to an endpoint.
API_HOSTS = [host.lower() for host in env_list("HB_API_HOSTS", [])]
API_ALLOW_PRIVATE = env_bool("HB_API_ALLOW_PRIVATE")
API_KEY_ENV_PREFIX = os.environ.get("HB_API_KEY_ENV_PREFIX", "HB_API_KEY_")
API_KEY_ENVS = env_list("HB_API_KEY_ENVS", [])
MODELEVAL_API_CLIENT = {
    "timeout": float(os.environ.get("HB_API_TIMEOUT", "120")),
    "max_retries": int(os.environ.get("HB_API_MAX_RETRIES", "4")),
    "backoff_s": float(os.environ.get("HB_API_BACKOFF", "0.5")),
    "max_backoff_s": float(os.environ.get("HB_API_MAX_BACKOFF", "30")),
}
