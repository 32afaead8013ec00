"""Named statements are read from `.sql` files by name; rows are read by column name."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from memory.sql import by_name, named_row, named_rows, parse_statements, statements

SOURCE = """-- the file's own notes
-- name: first
SELECT 1 AS one,
       2 AS two;

-- name: second
SELECT %s AS given
"""


def test_statements_are_split_at_their_name_headers() -> None:
    found = parse_statements(SOURCE)
    assert found == {
        "first": "SELECT 1 AS one,\n       2 AS two",
        "second": "SELECT %s AS given",
    }


def test_a_repeated_name_is_refused() -> None:
    with pytest.raises(ValueError, match="named twice"):
        parse_statements("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n")


def test_an_empty_statement_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        parse_statements("-- name: a\n\n-- name: b\nSELECT 2\n")


def test_by_name_pairs_values_with_columns() -> None:
    assert by_name(["a", "b"], (1, 2)) == {"a": 1, "b": 2}
    with pytest.raises(ValueError):
        by_name(["a"], (1, 2))


@pytest.mark.django_db
def test_rows_are_read_by_column_name() -> None:
    statement = parse_statements(SOURCE)["first"]
    with connection.cursor() as cur:
        cur.execute(statement)
        assert named_row(cur) == {"one": 1, "two": 2}
        assert named_row(cur) is None
        cur.execute(f"{statement} UNION ALL SELECT 3, 4")
        assert named_rows(cur) == [{"one": 1, "two": 2}, {"one": 3, "two": 4}]


def test_column_lists_and_earlier_statements_are_filled_in() -> None:
    found = parse_statements(
        "-- name: base\nSELECT {{context_locked}} FROM memory_context\n"
        "-- name: one\n{{> base}} WHERE id = %s\n"
        "-- name: aliased\nSELECT {{c.context_locked}} FROM memory_context c\n"
    )
    assert found["base"].startswith("SELECT id, slug, version, tick,")
    assert found["one"] == found["base"] + " WHERE id = %s"
    assert found["aliased"].startswith("SELECT c.id, c.slug, c.version,")


def test_an_include_of_a_later_statement_is_refused() -> None:
    with pytest.raises(ValueError, match="above its use"):
        parse_statements("-- name: a\n{{> b}}\n-- name: b\nSELECT 1\n")


@pytest.mark.parametrize(
    "package",
    sorted(
        {p.parent for top in ("memory", "morphz") for p in Path(top).rglob("queries.sql")}, key=str
    ),
)
def test_every_statement_file_loads_with_its_markers_filled_in(package: Path) -> None:
    found = statements(".".join(package.parts))
    assert found
    assert not [name for name, text in found.items() if "{{" in text or "}}" in text]
