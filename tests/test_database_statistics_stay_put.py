"""Autovacuum is off for every table of the test database (`conftest.django_db_setup`):
statistics taken while a test's rows are in progress would describe its tables as empty."""

from __future__ import annotations

from typing import Any

from django.db import connection


def test_autovacuum_is_off_for_every_table_of_the_test_database(db: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relkind = 'r'"
            " AND c.relnamespace = current_schema()::regnamespace"
        )
        tables = cursor.fetchall()
    assert any(name == "memory_searchdocument" for name, _ in tables)
    running = [name for name, options in tables if "autovacuum_enabled=off" not in (options or [])]
    assert running == []
