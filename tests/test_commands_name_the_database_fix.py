"""A management command pointed at an empty, outdated or unreachable database answers in one
line naming MORPHZ_DATA_DIR / DATABASE_URL and `migrate`, with a non-zero exit, instead of
a 70-line traceback ending in `relation "memory_context" does not exist`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection

from morphz.database_hint import database_problem
from morphz.devserver import database_url

ROOT = Path(__file__).resolve().parents[1]


def _connect(db: dict[str, Any]) -> psycopg.Connection[Any]:
    params = {"dbname": db["NAME"], "user": db["USER"], "password": db["PASSWORD"]}
    params.update(host=db["HOST"], port=db["PORT"])
    return psycopg.connect(autocommit=True, **{k: v for k, v in params.items() if v})


def _admin_connection() -> psycopg.Connection[Any]:
    return _connect(connection.settings_dict)


@pytest.fixture
def empty_database(db: Any) -> Iterator[dict[str, Any]]:
    """A new, empty database on the test server: its Django settings dict."""
    name = f"morphz_empty_{uuid.uuid4().hex[:10]}"
    with _admin_connection() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield {**connection.settings_dict, "NAME": name}
    finally:
        with _admin_connection() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(settings_dict: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DATABASE_URL=database_url(settings_dict), LOG_LEVEL="WARNING")
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_data_command_on_an_empty_database_says_migrate_in_one_line(
    empty_database: dict[str, Any],
) -> None:
    done = manage(empty_database, "create_token", "demo")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "manage.py migrate" in lines[0]
    assert "MORPHZ_DATA_DIR" in lines[0] and "DATABASE_URL" in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_django_command_on_an_empty_database_says_migrate_in_one_line(
    empty_database: dict[str, Any],
) -> None:
    # Django's own commands are not DataCommands: manage.py turns their first failing query
    # (here `relation "auth_user" does not exist`) into the same one line.
    done = manage(
        empty_database, "createsuperuser", "--noinput", "--username", "x", "--email", "x@x.x"
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("morphz: ") and "manage.py migrate" in last
    assert "Traceback" not in done.stderr


def test_a_database_with_migrations_missing_names_the_first(
    empty_database: dict[str, Any],
) -> None:
    with _connect(empty_database) as conn:
        conn.execute("CREATE TABLE django_migrations (app text, name text)")
        conn.execute("INSERT INTO django_migrations VALUES ('memory', '0001_initial')")
    problem = database_problem(empty_database)
    assert problem is not None
    assert "older than this code" in problem and "0002_" in problem and "migrate" in problem


def test_an_unreachable_server_is_named_with_the_variable(db: Any) -> None:
    unreachable = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": "1"}
    problem = database_problem(unreachable)
    assert problem is not None and "\n" not in problem
    assert problem.startswith("cannot reach DATABASE_URL") or "MORPHZ_DATA_DIR" in problem
    assert "Connection refused" in problem or "connection" in problem


def test_a_server_that_never_answers_is_given_up_on_as_requests_give_up(db: Any) -> None:
    # A port that accepts connections and says nothing (a hung server, a dropped route):
    # the probe waits as long as a request's own connection would, not longer.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = str(silent.getsockname()[1])
        settings = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": port}
        started = time.monotonic()
        problem = database_problem(settings)
        took = time.monotonic() - started
    assert problem is not None and problem.startswith("cannot reach")
    assert took < settings["OPTIONS"]["connect_timeout"] + 0.5, took


def test_a_migrated_database_has_no_problem(db: Any) -> None:
    assert database_problem() is None


def test_serve_refuses_an_empty_database_in_one_line(empty_database: dict[str, Any]) -> None:
    # Else it would start and answer every request 500 (`relation ... does not exist`).
    done = manage(empty_database, "serve", "--indexer", "none")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "manage.py migrate" in lines[0], done.stderr
    assert "serving" not in done.stdout


def test_an_unreachable_server_behind_database_url_is_not_said_to_be_unset(
    monkeypatch: Any,
) -> None:
    # The trial's case: DATABASE_URL set to a closed port, and the hint read "check
    # DATABASE_URL (unset, the embedded server under MORPHZ_DATA_DIR is used)".
    monkeypatch.setenv("DATABASE_URL", "postgresql://someone:secret@127.0.0.1:1/proddb")
    problem = database_problem({"NAME": "proddb", "HOST": "127.0.0.1", "PORT": "1"})
    assert problem is not None
    assert problem.startswith("cannot reach DATABASE_URL (database 'proddb' on 127.0.0.1:1)")
    assert "check that the server is running and DATABASE_URL names it" in problem
    assert "unset" not in problem and "MORPHZ_DATA_DIR" not in problem
    assert "secret" not in problem
