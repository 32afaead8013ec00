"""A test stopped by pytest-timeout reports the database's sessions (tests/activity.py):
a statement waiting on a lock is named with what it waits for and who blocks it."""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection

from tests.activity import describe


@pytest.mark.django_db
def test_a_statement_waiting_on_a_lock_is_named_with_its_blocker() -> None:
    params = connection.get_connection_params()
    holder = psycopg.connect(**params)
    waiter = psycopg.connect(**params, autocommit=True)
    try:
        holder.execute("LOCK TABLE memory_context IN ACCESS EXCLUSIVE MODE")
        holder_pid = holder.info.backend_pid
        waiter_pid = waiter.info.backend_pid
        blocked = threading.Thread(
            target=lambda: waiter.execute("SELECT count(*) FROM memory_context"), daemon=True
        )
        blocked.start()
        report = ""
        for _ in range(100):  # until the waiter's statement is seen waiting
            report = describe(params)
            if f"pid={waiter_pid} " in report and "wait_event_type='Lock'" in report:
                break
            blocked.join(0.05)
        line = next(row for row in report.splitlines() if row.startswith(f"pid={waiter_pid} "))
        assert "wait_event_type='Lock'" in line
        assert f"blocked_by=[{holder_pid}]" in line
        assert "AccessShareLock on memory_context" in line
        assert "SELECT count(*) FROM memory_context" in line
    finally:
        holder.rollback()
        blocked.join(10)
        holder.close()
        waiter.close()


def test_a_server_that_cannot_be_reached_is_said_not_raised() -> None:
    report = describe({"host": "127.0.0.1", "port": 1, "dbname": "none", "user": "none"})
    assert report.startswith("could not read pg_stat_activity:")
