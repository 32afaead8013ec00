"""Hand-written SQL on the hot paths: server-side preparation and pipeline mode on Django's
connection.

How it works: docs/internals.md, section `memory/hotsql.py`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import connection
from psycopg import pq


def bound_cursor() -> Any:
    """A psycopg cursor on Django's connection that sends parameters apart from the SQL
    (pass `prepare=True` to `execute` for a hot statement). Use it inside `pipeline()`, or
    read it inside `connection.wrap_database_errors`, so its errors are Django's."""
    connection.ensure_connection()
    return psycopg.Cursor(connection.connection)


def fetch_one_prepared(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    """The first row of `sql` run as a statement prepared on this connection (None when it
    returns no row). Raises Django's database errors."""
    with connection.wrap_database_errors, bound_cursor() as cur:
        cur.execute(sql, params, prepare=True)
        return cur.fetchone()


@contextmanager
def pipeline() -> Iterator[None]:
    """psycopg's pipeline mode on Django's connection: statements go out without waiting.
    Errors come out as Django's database errors, as from any other query.

    Inside an open pipeline (a group commit: `memory.tx.group`) it adds nothing, so leaving
    it does not wait either: results are fetched when read, and one transaction's writes go
    out with the next one's reads."""
    connection.ensure_connection()
    if connection.connection.pgconn.pipeline_status != pq.PipelineStatus.OFF:
        yield
        return
    with connection.wrap_database_errors, connection.connection.pipeline():
        yield
