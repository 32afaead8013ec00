"""One line with the fix when a command meets the wrong database, instead of a traceback.

A management command pointed at a fresh data folder (a new `MORPHZ_DATA_DIR`), at an empty
database or at a server that is not there fails deep inside the first query, in a
70-line traceback ending in `relation "memory_context" does not exist`. `database_hint`
turns the three causes a newcomer meets into one sentence naming where the command looked
and what to run; anything else is left to Django's own report (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import psycopg.errors
from psycopg.conninfo import make_conninfo

from memory.sql import named_row, named_rows, statements
from morphz.config import data_dir, database_config

MIGRATE = ".venv/bin/python manage.py migrate"
# For a settings dict that names no connect timeout of its own (libpq's floor is 2 s).
CONNECT_TIMEOUT = 2
# How long the probe's statements may wait once connected (a lock held on the migration
# table, a stuck server): a probe that hangs is worse than one that says "not ready".
ANSWER_SECONDS = 2.0


def where() -> str:
    """Which database this process uses, in the words of its settings (no password)."""
    config = database_config()
    if config.embedded:
        return f"the embedded PostgreSQL in MORPHZ_DATA_DIR={data_dir()}"
    host = f"{config.host}:{config.port}" if config.port else config.host
    return f"DATABASE_URL (database {config.name!r} on {host or 'localhost'})"


def reach_fix() -> str:
    """What to check when the database cannot be reached, for the database this process
    uses: the server behind DATABASE_URL, or the embedded one (DATABASE_URL unset)."""
    if database_config().embedded:
        return "check MORPHZ_DATA_DIR, or set DATABASE_URL to use another server"
    return "check that the server is running and DATABASE_URL names it"


def database_hint(exc: BaseException) -> str | None:
    """The fix for `exc` (a Django database error) in one line, or None when it is not a
    missing or outdated schema or an unreachable server."""
    from django.db import utils

    cause = exc.__cause__
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(cause, psycopg.errors.UndefinedTable):
        return (
            f"{where()} has no Morphz tables ({first}): run `{MIGRATE}` to create them, or "
            "set MORPHZ_DATA_DIR or DATABASE_URL to the database you meant"
        )
    if isinstance(cause, psycopg.errors.UndefinedColumn):
        return (
            f"the tables in {where()} are older than this code ({first}): "
            f"run `{MIGRATE}` to bring them up to date"
        )
    if isinstance(exc, utils.OperationalError):
        return f"cannot reach {where()}: {first}; {reach_fix()}, then run `{MIGRATE}` if the database is new"
    return None


# The three kinds of problem `find_database_problem` tells apart.
UNREACHABLE, EMPTY, BEHIND = "unreachable", "empty", "behind"


@dataclass(frozen=True)
class DatabaseProblem:
    """Why memory cannot be used: `kind` (UNREACHABLE, EMPTY or BEHIND) and `line`, the fix
    in one sentence naming where this process looks (host and database name, no password)."""

    kind: str
    line: str


def database_problem(
    db: Mapping[str, Any] | None = None, *, unreachable_ok: bool = False
) -> str | None:
    """Before a command touches memory: the reason it cannot, in one line, or None.
    `unreachable_ok`: an unreachable server is no reason (`serve` starts and answers 503
    until it is back); an empty or outdated database still is."""
    problem = find_database_problem(db)
    if problem is None or (unreachable_ok and problem.kind == UNREACHABLE):
        return None
    return problem.line


def find_database_problem(db: Mapping[str, Any] | None = None) -> DatabaseProblem | None:
    """What stops this process from using memory, or None: the server unreachable, the
    database empty (a new MORPHZ_DATA_DIR) or behind (migrations not applied).

    `db` is a Django database settings dict (default: the default database). Connects
    once, directly (not through the pool, whose retries print a warning per attempt), with
    the connect timeout every request's connection has (`morphz.config`, from
    MORPHZ_DB_WAIT_SECONDS), and compares the `memory` migrations on disk with those the
    database records. Costs one connection and one query (a few milliseconds); a server that
    connects but does not answer within ANSWER_SECONDS counts as unreachable."""
    from django.apps import apps
    from django.conf import settings

    if db is None:
        db = settings.DATABASES["default"]
    keys = {
        "dbname": "NAME",
        "user": "USER",
        "password": "PASSWORD",
        "host": "HOST",
        "port": "PORT",
    }
    params = {key: str(db[name]) for key, name in keys.items() if db.get(name)}
    options = db.get("OPTIONS")
    timeout = CONNECT_TIMEOUT
    if isinstance(options, Mapping):
        timeout = options.get("connect_timeout", CONNECT_TIMEOUT)
    applied = _applied_migrations(make_conninfo(connect_timeout=timeout, **params))
    if isinstance(applied, DatabaseProblem):
        return applied
    folder = Path(apps.get_app_config("memory").path) / "migrations"
    on_disk = sorted(p.stem for p in folder.glob("[0-9]*.py"))
    if not applied:
        return DatabaseProblem(
            EMPTY,
            f"{where()} has no Morphz tables: run `{MIGRATE}` to create them, or set "
            "MORPHZ_DATA_DIR or DATABASE_URL to the database you meant",
        )
    pending = [name for name in on_disk if name not in applied]
    if pending:
        return DatabaseProblem(
            BEHIND,
            f"the tables in {where()} are older than this code ({len(pending)} migration(s) "
            f"not applied, the first {pending[0]}): run `{MIGRATE}`",
        )
    return None


def _applied_migrations(conninfo: str) -> set[str] | DatabaseProblem:
    """The `memory` migrations the database records (none without Django's table), or why
    it cannot say: unreachable, or no answer within ANSWER_SECONDS."""
    try:
        with psycopg.connect(conninfo) as conn:
            applied: set[str] = set()
            sql = statements("morphz")
            conn.execute(sql["answer_within"], {"ms": str(int(ANSWER_SECONDS * 1000))})
            table = named_row(conn.execute(sql["migrations_table"]))
            if table is not None and table["present"]:
                rows = named_rows(conn.execute(sql["applied_migrations"]))
                applied = {row["name"] for row in rows}
            return applied
    except psycopg.errors.QueryCanceled:
        return DatabaseProblem(
            UNREACHABLE, f"{where()} took the connection but did not answer in {ANSWER_SECONDS} s"
        )
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no answer"
        return DatabaseProblem(
            UNREACHABLE,
            f"cannot reach {where()}: {first}; {reach_fix()}",
        )
