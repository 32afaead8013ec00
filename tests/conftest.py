"""Test fixtures: a real PostgreSQL (embedded unless DATABASE_URL is set) and a small cast
of contexts built through the real `memory` functions.

Every test that uses the database ends with the replay check (R51): each context present
when the test body returns is rebuilt from its history alone and compared with its stored
state (`memory.versions.replay.verify_context`), before the test's transaction is rolled
back; a difference fails the test. A test that changes stored state behind the engine's
back on purpose opts out with `@pytest.mark.no_replay_check("why")`. `MORPHZ_REPLAY_CHECK=0`
turns the check off (to measure what it costs).
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from typing import Any

import pytest

from morphz.embedded_db import ensure_database

# Before pytest-django connects: start (or join) the embedded server.
ensure_database()

_spent = {"seconds": 0.0, "contexts": 0, "tests": 0}  # what the check cost this run

DB_FIXTURES = (
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
)


def pytest_configure(config: pytest.Config) -> None:
    # Tests drain the search outbox themselves; no background thread on the test database.
    from django.conf import settings

    settings.MORPHZ_INDEXER_IN_PROCESS = False
    config.addinivalue_line(
        "markers",
        "no_replay_check(reason): the test corrupts stored state on purpose; skip the replay "
        "check of its contexts (say why)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    result = yield  # a failing test fails as it is; the check runs after a passing body
    marker = item.get_closest_marker("no_replay_check")
    if marker is not None:
        if not (marker.args or marker.kwargs.get("reason")):
            raise pytest.UsageError(f"{item.nodeid}: no_replay_check needs a reason")
        return result
    if os.environ.get("MORPHZ_REPLAY_CHECK", "1") == "0":
        return result
    if any(name in getattr(item, "fixturenames", ()) for name in DB_FIXTURES):
        started = time.perf_counter()
        try:
            _replay_check()
        finally:
            _spent["seconds"] += time.perf_counter() - started
            _spent["tests"] += 1
    return result


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _spent["tests"]:
        terminalreporter.write_line(
            f"replay check: {_spent['contexts']} contexts after {_spent['tests']} tests "
            f"in {_spent['seconds']:.1f} s"
        )


def _replay_check() -> None:
    """Verify every context in the database; AssertionError listing the differences."""
    from django.db import DatabaseError, connection
    from django.db.transaction import TransactionManagementError

    from memory.models import Context
    from memory.versions.replay import verify_context

    if connection.in_atomic_block and connection.needs_rollback:
        return  # the test ended inside a broken transaction: nothing can be read
    try:
        contexts = list(Context.objects.order_by("pk"))
    except (DatabaseError, TransactionManagementError):
        return  # the test left the connection unusable (it checks database failures)
    failures = []
    _spent["contexts"] += len(contexts)
    for context in contexts:
        differences = verify_context(context)
        if differences:
            shown = "\n    ".join(differences[:20])
            failures.append(
                f"context {context.slug!r}: {len(differences)} difference(s)\n    {shown}"
            )
    if failures:
        raise AssertionError(
            "replay check (R51): the history does not explain the stored state\n"
            + "\n".join(failures)
        )


# A hung statement is still running shortly before pytest-timeout stops its test: the
# database's sessions are read then, and reported with the failure (see tests/activity.py).
SESSIONS_READ_AT = 0.9  # of the test's timeout


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    import threading

    marker = item.get_closest_marker("timeout")
    seconds = float(marker.args[0] if marker and marker.args else item.config.getini("timeout"))
    if not seconds:
        return (yield)
    timer = threading.Timer(seconds * SESSIONS_READ_AT, _read_sessions, args=(item,))
    timer.daemon = True
    timer.start()
    try:
        return (yield)
    finally:
        timer.cancel()


def _read_sessions(item: pytest.Item) -> None:
    from django.db import connection

    from tests.activity import describe

    item.stash[_SESSIONS] = describe(connection.get_connection_params())


_SESSIONS = pytest.StashKey[str]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.excinfo is not None and _SESSIONS in item.stash:
        report.sections.append(("database sessions before the timeout", item.stash[_SESSIONS]))
    return report


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> None:
    """The test database's tables keep the statistics the tests themselves give them:
    autovacuum is off for each. A test's rows are never committed, and VACUUM or ANALYZE
    from another session counts another transaction's rows in progress as none, while the
    table keeps their pages: the planner then reads the test's tables as empty (rows per
    page 0) and plans nested loops that ran a search for minutes."""
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relkind = 'r'"
            " AND c.relnamespace = current_schema()::regnamespace"
        )
        for (table,) in cursor.fetchall():
            name = connection.ops.quote_name(table)
            cursor.execute(f"ALTER TABLE {name} SET (autovacuum_enabled = off)")
