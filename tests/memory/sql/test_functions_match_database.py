"""The migrated database holds exactly the current definition of each database function
(memory/sql/functions/), and no function the registry does not name."""

from __future__ import annotations

import pytest
from django.db import connection

from memory.search import vector_column
from memory.sql.functions import CURRENT, WITH_PGVECTOR, body, definition

pytestmark = pytest.mark.django_db


def _database_functions() -> dict[str, str]:
    """The source of each function of the public schema that no extension owns."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT p.proname, p.prosrc FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d "
            "WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')"
        )
        return dict(cur.fetchall())


def _expected() -> set[str]:
    """The registry's functions this server holds: pgvector's only where it has pgvector."""
    return set(CURRENT) if vector_column.available() else set(CURRENT) - WITH_PGVECTOR


def test_every_database_function_is_in_the_registry() -> None:
    assert set(_database_functions()) == _expected()


@pytest.mark.parametrize("name", sorted(CURRENT))
def test_the_database_holds_the_current_file(name: str) -> None:
    if name not in _expected():
        pytest.skip(f"{name} is defined only where the server has pgvector; this one has not")
    assert _database_functions()[name].strip() == body(name).strip()


@pytest.mark.parametrize("name", sorted(CURRENT))
def test_the_file_is_named_for_its_function_and_version(name: str) -> None:
    assert CURRENT[name].startswith(f"{name}_v")
    assert f"CREATE OR REPLACE FUNCTION {name}(" in definition(name)
