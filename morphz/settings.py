"""Django settings for Morphz, read from environment variables (see README, Configuration).

Every value has a default that works on a laptop; a value that is present but wrong stops
the process at start with a message naming the variable.
"""

from __future__ import annotations

import os

from morphz.config import (
    BASE_DIR,
    channel_layers,
    data_dir,
    database_config,
    env_bool,
    env_float,
    env_int,
    env_log_level,
    env_names,
    env_rate,
    env_str,
    parse_database_url,
    replica_urls,
)

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    # A stable per-installation key kept beside the data, so sessions survive restarts.
    _key_file = data_dir() / "secret_key"
    if _key_file.exists():
        SECRET_KEY = _key_file.read_text().strip()
    else:
        import secrets

        _key_file.parent.mkdir(parents=True, exist_ok=True)
        SECRET_KEY = secrets.token_urlsafe(50)
        _key_file.write_text(SECRET_KEY)
        _key_file.chmod(0o600)

HOST = env_str("HOST", "127.0.0.1")
PORT = env_int("PORT", 8000, minimum=1, maximum=65535)
ALLOWED_HOSTS = env_names("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in env_str("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from a pinned package, never a CDN
    "channels",
    "memory",
    "api",
    "explorer",
]

MIDDLEWARE = [
    "api.middleware.ApiHostMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "api.middleware.DatabaseUnavailableMiddleware",
    "api.middleware.ResponseCapMiddleware",
]

ROOT_URLCONF = "morphz.urls"
ASGI_APPLICATION = "morphz.asgi.application"

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
            ],
        },
    },
]

DATABASE = database_config()
DATABASES = {
    "default": DATABASE.django_settings(
        pool_max=env_int("MORPHZ_DB_POOL_MAX", 16, minimum=0),
        wait_seconds=env_float("MORPHZ_DB_WAIT_SECONDS", 1.0, minimum=0.1, maximum=60),
        prepared=env_bool("MORPHZ_DB_PREPARED_STATEMENTS", True),
    )
}
# Streaming replicas of DATABASE_URL (R68, docs/scaling.md): reads that may be served from
# one go to a replica that has replayed what the caller last saw (`memory.replicas`). With
# none (the default) no alias exists and every read takes the single-server path unchanged.
MORPHZ_REPLICAS: list[str] = []
for _number, _url in enumerate(replica_urls()):
    _alias = f"replica_{_number}"
    DATABASES[_alias] = parse_database_url(_url, "DATABASE_REPLICA_URLS").django_settings(
        pool_max=env_int("MORPHZ_DB_POOL_MAX", 16, minimum=0),
        wait_seconds=env_float("MORPHZ_DB_WAIT_SECONDS", 1.0, minimum=0.1, maximum=60),
        prepared=env_bool("MORPHZ_DB_PREPARED_STATEMENTS", True),
    )
    # Tests run against the test database the replica streams from the primary.
    DATABASES[_alias]["TEST"] = {"MIRROR": "default"}
    MORPHZ_REPLICAS.append(_alias)
# How long a read waits for a replica to replay the version it needs before the primary
# answers it, and how long a replica that failed is left alone before it is tried again.
MORPHZ_REPLICA_WAIT_SECONDS = env_float(
    "MORPHZ_REPLICA_WAIT_SECONDS", 0.25, minimum=0.0, maximum=10.0
)
MORPHZ_REPLICA_RETRY_SECONDS = env_float(
    "MORPHZ_REPLICA_RETRY_SECONDS", 5.0, minimum=0.1, maximum=600.0
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = data_dir() / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise expects it even before collectstatic
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # Front-end libraries installed by npm from package.json; never copied into the repo.
    ("vendor/cytoscape", BASE_DIR / "node_modules" / "cytoscape" / "dist"),
    # The explorer's graph layout (fCoSE) and the two packages it is built on.
    ("vendor/cytoscape-fcose", BASE_DIR / "node_modules" / "cytoscape-fcose"),
    ("vendor/cose-base", BASE_DIR / "node_modules" / "cose-base"),
    ("vendor/layout-base", BASE_DIR / "node_modules" / "layout-base"),
]
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "/admin/login/"

# Largest request body an agent may send (events carry long logs); larger gets 413.
MAX_REQUEST_BYTES = env_int("MORPHZ_MAX_REQUEST_BYTES", 8 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
# Largest answer the API sends; lists page and large bodies are read on demand well below
# it, and anything still larger is refused with 413 `too_large` (never cut silently).
MAX_RESPONSE_BYTES = env_int(
    "MORPHZ_MAX_RESPONSE_BYTES", 4 * MAX_REQUEST_BYTES, minimum=2 * MAX_REQUEST_BYTES
)

# Connection limits of the served HTTP stack (morphz/http_protocol.py, docs/production.md):
# a request's headers must arrive within HEADER_TIMEOUT seconds of the connection (or of the
# previous answer); its body may pause at most BODY_TIMEOUT seconds between two reads; an
# answer the client stops reading is dropped after SEND_TIMEOUT seconds without progress;
# an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT seconds.
MORPHZ_HEADER_TIMEOUT = env_float("MORPHZ_HEADER_TIMEOUT", 10.0, minimum=0.1, maximum=3600)
MORPHZ_BODY_TIMEOUT = env_float("MORPHZ_BODY_TIMEOUT", 30.0, minimum=0.1, maximum=3600)
MORPHZ_SEND_TIMEOUT = env_float("MORPHZ_SEND_TIMEOUT", 30.0, minimum=0.1, maximum=3600)
MORPHZ_KEEP_ALIVE_TIMEOUT = env_int("MORPHZ_KEEP_ALIVE_TIMEOUT", 5, minimum=1, maximum=3600)
# Open connections one server process keeps; 0 derives it from the file-descriptor limit.
MORPHZ_MAX_CONNECTIONS = env_int("MORPHZ_MAX_CONNECTIONS", 0, minimum=0)
# Heavy reads (diff, export, long lists) one token runs at once; more wait their turn
# without holding a worker thread (morphz/serving.py, HeavyReadsPerToken).
MORPHZ_HEAVY_READS_PER_TOKEN = env_int("MORPHZ_HEAVY_READS_PER_TOKEN", 1, minimum=1)
# After a heavy read, its caller's turn rests this many times as long as the answer took to
# build: one caller's heavy reads use at most 1 / (1 + rest) of a worker's time.
MORPHZ_HEAVY_READS_REST = env_float("MORPHZ_HEAVY_READS_REST", 1.0, minimum=0, maximum=100)

# Import (memory/versions/exchange.py): the longest line of an export file and its whole
# uncompressed size; longer or larger files are refused while they are read.
MORPHZ_IMPORT_MAX_LINE_BYTES = env_int(
    "MORPHZ_IMPORT_MAX_LINE_BYTES", 128 * 1024 * 1024, minimum=1024 * 1024
)
MORPHZ_IMPORT_MAX_BYTES = env_int("MORPHZ_IMPORT_MAX_BYTES", 64 * 1024**3, minimum=1024 * 1024)

CHANNEL_LAYERS = channel_layers(env_str("CHANNEL_LAYER_URL", "").strip())

# An open explorer websocket re-checks its person's access this often while quiet (and
# before every update it forwards); a revoked person's socket is closed.
MORPHZ_WS_RECHECK_SECONDS = env_int("MORPHZ_WS_RECHECK_SECONDS", 5, minimum=1)

# Background indexer inside the served application (R34); `run_indexer` runs it alone.
MORPHZ_INDEXER_IN_PROCESS = env_bool("MORPHZ_INDEXER_IN_PROCESS", True)
# Search reorders a question's best hits by meaning (memory.search.semantic); off, the
# index worker embeds nothing (indexing about 1.5x faster) and search ranks by words alone.
MORPHZ_SEARCH_MEANING = env_bool("MORPHZ_SEARCH_MEANING", True)
# Index a reply with the turn it answers (memory.search.documents.reply_context).
MORPHZ_SEARCH_REPLY_CONTEXT = env_bool("MORPHZ_SEARCH_REPLY_CONTEXT", True)
# Find the documents nearest a question in meaning in SQL where the database has pgvector
# (memory.search.vector_column.used); off, they are compared in Python as without it.
MORPHZ_SEARCH_PGVECTOR = env_bool("MORPHZ_SEARCH_PGVECTOR", True)
# Search's embedder (memory.search.semantic.model_name): the bundled model unless an
# OpenAI-compatible embeddings endpoint is named (its base URL, model and key).
MORPHZ_EMBEDDINGS_URL = env_str("MORPHZ_EMBEDDINGS_URL", "")
MORPHZ_EMBEDDINGS_MODEL = env_str("MORPHZ_EMBEDDINGS_MODEL", "text-embedding-3-small")
MORPHZ_EMBEDDINGS_KEY = env_str("MORPHZ_EMBEDDINGS_KEY", "")
MORPHZ_DEFAULT_CAPACITY_TOKENS = env_int("MORPHZ_DEFAULT_CAPACITY_TOKENS", 32000, minimum=100)
# Forks one context may have before only an admin-scope token may fork it again (R65).
MORPHZ_FORK_LIMIT = env_int("MORPHZ_FORK_LIMIT", 20, minimum=0)
# Export signing keys (R65, memory.versions.signing): comma-separated, the first signs, every
# one verifies (rotate by putting the new key first). Empty: one key derived from SECRET_KEY.
MORPHZ_EXPORT_KEYS = [k for k in env_str("MORPHZ_EXPORT_KEYS", "").split(",") if k.strip()]
# A pending action with no result after this many ticks shows as stale in the model input
# (R59): a result that will never come, for the model (or a person) to cancel.
MORPHZ_STALE_ACTION_TICKS = env_int("MORPHZ_STALE_ACTION_TICKS", 3, minimum=1)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.auth.ContextTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # JSON is the only format: `?format=...` is an unknown parameter (400), not a renderer
    # choice that answers 404 for a renderer the API does not have.
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.ContextTokenRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"context_token": env_rate("MORPHZ_THROTTLE_RATE", "6000/min")},
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Morphz API",
    "DESCRIPTION": "Structured context and memory runtime for long-running LLM agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two `status` vocabularies (events and frames) would otherwise collide and be named by
    # a hash, with a warning in the log every time the schema is served.
    "ENUM_NAME_OVERRIDES": {
        "EventStatusEnum": "memory.kinds.EVENT_STATUSES",
        "FrameStatusEnum": "memory.kinds.FRAME_STATUSES",
        # The codes of `error.code`, named once for the TypeScript and other generated clients.
        "ErrorCodeEnum": "api.shapes.ERROR_CODES",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_log_level("LOG_LEVEL", "INFO")},
}

if os.environ.get("MORPHZ_SECURE_COOKIES"):
    SESSION_COOKIE_SECURE = env_bool("MORPHZ_SECURE_COOKIES", False)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
