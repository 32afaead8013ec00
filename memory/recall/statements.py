"""Running recall's first-page statement (memory/recall/queries.sql) prepared.

How it works: docs/internals.md, section `memory/recall/statements.py`."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from django.db import DatabaseError, connection

from memory.sql import column_names, statements


def first_page_sql(direction: str) -> str:
    """The first-page statement for one direction (`ancestors`, `descendants` or `both`)."""
    return statements("memory.recall")[f"first_page_{direction}"]


PARAM_TYPES = {
    "ctx": "bigint",
    "root": "text",
    "seq": "bigint",
    "depth": "int",
    "target": "int",
    "cap": "int",
    "lo": "int",
    "hi": "int",
    "budget": "int",
    "bodies": "boolean",
    "contents": "boolean",
    "preview": "int",
}
_prepared: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_prepared_lock = threading.Lock()


def run_prepared(
    name: str, sql: str, params: dict[str, Any]
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run the page statement as a server-side prepared statement (PREPARE once per database
    session, then EXECUTE). Planning it costs about as much as running it (0.6 of 1.1 ms on
    the benchmark graph), which alone kept recall well behind one hand-written query.
    Inside a transaction block it runs unprepared: a missing prepared statement there would
    abort the caller's transaction. Returns the column names and the rows."""
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            return column_names(cursor), rows
        names = list(PARAM_TYPES)
        raw = connection.connection
        with _prepared_lock:
            done = _prepared.setdefault(raw, set())
        args = [params[n] for n in names]
        execute = f"EXECUTE {name} ({', '.join(['%s'] * len(names))})"
        for attempt in (1, 2):
            if name not in done:
                text = sql
                for index, param in enumerate(names, start=1):
                    text = text.replace(f"%({param})s", f"${index}")
                types = ", ".join(PARAM_TYPES[n] for n in names)
                try:
                    cursor.execute(f"PREPARE {name} ({types}) AS {text}")
                except DatabaseError as exc:
                    if getattr(exc.__cause__, "sqlstate", None) != "42P05":  # already there
                        raise
                done.add(name)
            try:
                cursor.execute(execute, args)
            except DatabaseError as exc:
                # Someone ran DEALLOCATE/DISCARD on this session: prepare again, once.
                if attempt == 2 or getattr(exc.__cause__, "sqlstate", None) != "26000":
                    raise
                done.discard(name)
                continue
            rows = cursor.fetchall()
            return column_names(cursor), rows
    raise AssertionError("unreachable")
