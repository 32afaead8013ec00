"""A connection keeps the commit's load prepared for its life (and the write function's
statements cached): a plan made while the tables were a page or two must still find each
named frame through its unique key once a context holds thousands, not read the whole table
once per name (cheapest on an empty table, and kept until ANALYZE runs, which it never does
inside one long transaction: an import, a replay, a test run)."""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from memory.contexts import create_context
from memory.limits import MAX_OPS
from memory.tx.engine import submit_transaction

FRAMES = 2000
NAMED = 400


def commit(context_id: int, ops: list[dict[str, Any]]) -> None:
    submit_transaction(context_id, data={"base_version": None, "reason": "t", "ops": ops})


def frame_rows_scanned() -> int:
    """Rows of memory_frame this transaction has read by sequential scan so far."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_xact_user_tables "
            "WHERE relname = 'memory_frame'"
        )
        return int(cur.fetchone()[0])


def test_a_plan_made_on_empty_tables_still_finds_each_name_by_its_key(transactional_db):
    with connection.cursor() as cur:  # the tables as a new database has them: a page or none
        cur.execute("VACUUM ANALYZE memory_frame, memory_event, memory_relation")
        cur.execute("DISCARD PLANS")
    small = create_context("small")
    for n in range(8):  # past the five runs after which a prepared statement keeps one plan
        commit(small.pk, [{"op": "derive", "id": f"s{n}", "from": [], "body": {"n": str(n)}}])
    large = create_context("large")
    for start in range(0, FRAMES, MAX_OPS):
        ops = [
            {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}}
            for i in range(start, start + MAX_OPS)
        ]
        commit(large.pk, ops)
    relate = [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(NAMED)
    ]
    create = [{"op": "derive", "id": f"m{i}", "from": [f"n{i}"], "body": {}} for i in range(NAMED)]
    try:
        with transaction.atomic():
            before = frame_rows_scanned()
            commit(large.pk, relate)
            commit(large.pk, create)
            scanned = frame_rows_scanned() - before
    finally:
        # Statistics outlive the test's rows: leave them describing a context of this size,
        # not the empty tables the tests after this one would otherwise be planned for.
        with connection.cursor() as cur:
            cur.execute("ANALYZE memory_frame, memory_event, memory_relation")
            cur.execute("DISCARD PLANS")
    # A lookup per name reads no table; one sequential scan per name reads ~2000 rows each.
    assert scanned < FRAMES, scanned
