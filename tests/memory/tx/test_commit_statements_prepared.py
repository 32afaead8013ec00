"""The commit path's row lock, load and write function and the API's token check are
prepared on the server once per connection, and only they: Django's own queries are not."""

from __future__ import annotations

from django.db import connection

from memory.contexts import create_context
from memory.tx.engine import submit_transaction
from morphz.config import PREPARE_WHEN_ASKED


def prepared_statements() -> list[str]:
    with connection.cursor() as cur:
        # Prepared through the protocol (psycopg); the recall walk's SQL PREPAREs are apart.
        cur.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        return [row[0] for row in cur.fetchall()]


def test_the_commit_statements_are_prepared_and_nothing_else(transactional_db):
    context = create_context("prepared")
    for n in range(3):
        submit_transaction(context.pk, text=f"(context-tx (derive f{n} (n {n})))")
    statements = prepared_statements()
    lock = [s for s in statements if "FOR NO KEY UPDATE" in s and "memory_context" in s]
    load = [s for s in statements if "'frames', (SELECT" in s]
    write = [s for s in statements if "morphz_write_commit" in s]
    assert lock and load and write, statements
    # Earlier tests on the same connection may have prepared these (the API's token check
    # among them) in other forms; nothing else is prepared.
    others = [s for s in statements if s not in lock + load + write and "memory_apitoken" not in s]
    assert others == [], others


def test_with_preparation_off_commits_prepare_nothing(transactional_db):
    """MORPHZ_DB_PREPARED_STATEMENTS=false (a pooler that cannot keep them) sets psycopg's
    threshold to None, which refuses `prepare=True` too: commits work the same."""
    context = create_context("unprepared")
    connection.ensure_connection()
    with connection.cursor() as cur:
        cur.execute("DEALLOCATE ALL")
    connection.connection._prepared.clear()
    connection.connection.prepare_threshold = None
    try:
        for n in range(3):
            submit_transaction(context.pk, text=f"(context-tx (derive g{n} (n {n})))")
        assert prepared_statements() == []
    finally:
        connection.connection.prepare_threshold = PREPARE_WHEN_ASKED  # back to the pool as it came
        connection.close()
    context.refresh_from_db()
    assert context.version == 3
