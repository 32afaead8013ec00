"""Reading the environment: every setting Morphz takes, checked before Django starts.

Kept free of Django imports so `manage.py`, the ASGI entry point and the test suite can
ask where the embedded PostgreSQL lives before settings are loaded.
"""

from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent


class ConfigError(Exception):
    """A setting read from the environment is wrong; the message says which and why."""


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_names(name: str, default: str) -> list[str]:
    """A comma-separated list of names (hosts), stripped; unset or blank is `default`, as for
    every setting; ConfigError when a value names nothing (",,"), which no request could pass."""
    raw = os.environ.get(name, "")
    names = [part.strip() for part in (raw if raw.strip() else default).split(",")]
    if not any(names):
        raise ConfigError(f"{name} must name at least one host (comma-separated), got {raw!r}")
    return [n for n in names if n]


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be at most {maximum}, got {value}")
    return value


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {raw!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be at most {maximum}, got {value}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {raw!r}")


_RATE = re.compile(r"(\d+)/(s|sec|second|m|min|minute|h|hour|d|day)s?")


def env_rate(name: str, default: str) -> str:
    """A request rate as DRF's throttles read it: `<count>/<second|minute|hour|day>`."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip()
    match = _RATE.fullmatch(value)
    if match is None or int(match.group(1)) < 1:
        raise ConfigError(
            f"{name} must be <count>/<second|minute|hour|day> (e.g. 6000/min), got {raw!r}"
        )
    return value


def env_log_level(name: str, default: str) -> str:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().upper()
    if value not in logging.getLevelNamesMapping():
        raise ConfigError(
            f"{name} must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got {raw!r}"
        )
    return value


# A threshold no statement reaches by repetition: only `prepare=True` prepares.
PREPARE_WHEN_ASKED = 2**31 - 1


@dataclass(frozen=True)
class DatabaseConfig:
    name: str
    user: str
    password: str
    host: str
    port: str
    embedded: bool

    def django_settings(
        self, pool_max: int = 0, wait_seconds: float = 1.0, prepared: bool = True
    ) -> dict[str, object]:
        # Under ASGI each request may run on a fresh thread; a pool spares every request a
        # new PostgreSQL backend. Django requires CONN_MAX_AGE = 0 with a pool.
        # `wait_seconds` bounds how long a request waits for a connection: with PostgreSQL
        # down it answers 503 `database_unavailable` after that, instead of hanging (the
        # pool's default is 30 s). libpq's connect_timeout cannot go below 2 s.
        options: dict[str, object] = {
            "connect_timeout": max(2, math.ceil(wait_seconds)),
            # psycopg prepares a statement on the server only when told to
            # (`execute(..., prepare=True)`: the commit path's few hot statements). Django's
            # default (None) refuses even that; automatic preparation after a few runs would
            # fill every connection's cache with one-off ORM queries. Off (None: nothing is
            # prepared) behind a pooler that cannot keep prepared statements.
            "prepare_threshold": PREPARE_WHEN_ASKED if prepared else None,
        }
        if pool_max > 0:
            options["pool"] = {
                "min_size": min(2, pool_max),
                "max_size": pool_max,
                "timeout": wait_seconds,
            }
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": self.name,
            "USER": self.user,
            "PASSWORD": self.password,
            "HOST": self.host,
            "PORT": self.port,
            "CONN_MAX_AGE": 0 if self.embedded or pool_max > 0 else 60,
            "OPTIONS": options,
            # Several test runs may share one server (parallel checkouts, helpers): a
            # suffix keeps their throwaway databases apart.
            "TEST": {"NAME": f"test_{self.name}{os.environ.get('MORPHZ_TEST_DB_SUFFIX', '')}"},
        }


def parse_database_url(url: str, variable: str = "DATABASE_URL") -> DatabaseConfig:
    """Parse `postgres://user:pass@host:port/dbname` (or a socket dir in `?host=`);
    `variable` names the setting in the error."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ConfigError(f"{variable} must start with postgres:// or postgresql://, got {url!r}")
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ConfigError(f"{variable} names no database (postgres://host/DBNAME): {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"{variable} has a bad port: {url!r}") from None
    host = unquote(parts.hostname or "")
    for item in parts.query.split("&"):
        key, _, value = item.partition("=")
        if key == "host" and value:
            host = unquote(value)
    return DatabaseConfig(
        name=name,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        host=host,
        port=str(port or ""),
        embedded=False,
    )


def replica_urls() -> list[str]:
    """DATABASE_REPLICA_URLS: comma-separated URLs of streaming replicas of DATABASE_URL
    (none by default). Replicas of the embedded server make no sense: it has no address."""
    raw = os.environ.get("DATABASE_REPLICA_URLS", "")
    urls = [url.strip() for url in raw.split(",") if url.strip()]
    if urls and not os.environ.get("DATABASE_URL", "").strip():
        raise ConfigError(
            "DATABASE_REPLICA_URLS needs DATABASE_URL: replicas stream from a primary "
            "you run yourself, not from the embedded server"
        )
    return urls


def channel_layers(url: str) -> dict[str, dict[str, Any]]:
    """CHANNEL_LAYERS for CHANNEL_LAYER_URL: in memory when empty, else Redis.

    Redis connections get no read timeout: a consumer's receive is a blocking pop that
    waits 5 s on the server, and redis-py 8 reads with a 5 s timeout by default, so an idle
    explorer socket would be torn down every few seconds (channels_redis#422)."""
    if not url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [{"address": url, "socket_timeout": None}]},
            }
        }
    raise ConfigError(f"CHANNEL_LAYER_URL must be a redis:// URL, got {url!r}")


def data_dir() -> Path:
    return Path(env_str("MORPHZ_DATA_DIR", str(BASE_DIR / "var"))).resolve()


def embedded_pgdata() -> Path:
    return data_dir() / "pgdata"


def database_config() -> DatabaseConfig:
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        return parse_database_url(url)
    # pgserver puts its unix socket in the data folder when the path is short enough.
    return DatabaseConfig(
        name="postgres",
        user="postgres",
        password="",
        host=str(embedded_pgdata()),
        port="",
        embedded=True,
    )
