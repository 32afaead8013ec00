"""The context row lock (`memory.locking.lock_context`) makes a second writer of the context
wait, and lets a row that only references the context in: a foreign key's check takes KEY
SHARE, which NO KEY UPDATE does not block (the search indexer's documents). Held up, an
indexer batch spanning two contexts deadlocked against an erasure locking both."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.locking import lock_context

TAKEN_AT_ONCE = "300ms"  # a lock that is free is granted at once; one that is held, never


def _other_session() -> psycopg.Connection[Any]:
    params = connection.get_connection_params()
    wanted = ("host", "port", "user", "dbname", "password")
    return psycopg.connect(**{k: v for k, v in params.items() if k in wanted and v is not None})


def test_a_reference_goes_in_while_a_writer_waits(transactional_db: Any) -> None:
    context = create_context("locked")
    with transaction.atomic():
        lock_context(context.pk)
        with _other_session() as other:
            other.execute(f"SET lock_timeout = '{TAKEN_AT_ONCE}'")
            other.execute("SELECT 1 FROM memory_context WHERE id = %s FOR KEY SHARE", [context.pk])
            other.rollback()
            other.execute(f"SET lock_timeout = '{TAKEN_AT_ONCE}'")
            with pytest.raises(psycopg.errors.LockNotAvailable):
                other.execute(
                    "SELECT 1 FROM memory_context WHERE id = %s FOR NO KEY UPDATE", [context.pk]
                )
