"""What the test database's server is doing, for a test that hit pytest-timeout: each other
session's state, what it waits on and which sessions block it, read on a new connection
while the hung statement is still running (a hang is told from a slow plan this way)."""

from __future__ import annotations

from typing import Any

import psycopg

ACTIVITY_SQL = """
SELECT a.pid, a.backend_type, a.state, a.wait_event_type, a.wait_event,
       pg_blocking_pids(a.pid) AS blocked_by,
       round(extract(epoch FROM now() - a.xact_start)::numeric, 1) AS xact_seconds,
       round(extract(epoch FROM now() - a.query_start)::numeric, 1) AS query_seconds,
       left(regexp_replace(a.query, '\\s+', ' ', 'g'), 240) AS query,
       ARRAY(SELECT l.locktype || ' ' || l.mode || ' on ' || coalesce(l.relation::regclass::text,
                    l.transactionid::text, l.virtualxid, '?')
             FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted) AS waiting_for
FROM pg_stat_activity a
WHERE a.pid <> pg_backend_pid() AND (a.datname = current_database() OR a.datname IS NULL)
ORDER BY a.pid
"""


def describe(params: dict[str, Any]) -> str:
    """One line per other session of the database named in `params` (psycopg connection
    keywords, as `connection.get_connection_params()` gives them); never raises: a failure
    to look is itself the report."""
    # Django's cursor class and preparation settings belong to its own connection only.
    plain = {k: v for k, v in params.items() if k not in ("cursor_factory", "prepare_threshold")}
    try:
        with psycopg.connect(**{**plain, "connect_timeout": 10}, autocommit=True) as conn:
            conn.execute("SET statement_timeout = '10s'")
            cursor = conn.execute(ACTIVITY_SQL)
            rows = cursor.fetchall()
            names = [column.name for column in cursor.description or []]
    except psycopg.Error as error:
        return f"could not read pg_stat_activity: {error}"
    return "\n".join(
        " ".join(f"{name}={value!r}" for name, value in zip(names, row, strict=True))
        for row in rows
    )
