"""A commit's foreign keys are checked through the referenced table's primary key, even by a
connection whose checks were first planned while the tables held a page or two.

PostgreSQL plans each foreign-key check once per connection and keeps the plan. Planned on a
tiny table, the cheapest check reads the table from start to end, and it kept doing so for
every row a commit refers to once the table had grown: in a young database the first minute
of commits ran 2-5 times slower. The commit's database transaction keeps sequential scans
off from its load to its end (`memory.tx.loader`), so the checks run at the commit are
planned as lookups by key."""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from memory.contexts import create_context
from memory.limits import MAX_OPS
from memory.tx.engine import submit_transaction

FRAMES = 2000
NAMED = 200


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


def test_the_checks_of_a_commit_read_no_table_through(transactional_db: Any) -> None:
    with connection.cursor() as cur:  # the tables as a new database has them
        cur.execute("VACUUM ANALYZE memory_frame, memory_relation, memory_framerevision")
        cur.execute("DISCARD PLANS")
    small = create_context("small")
    # Past the five runs after which PostgreSQL keeps one plan for each check.
    for n in range(8):
        ops = [{"op": "derive", "id": f"s{n}", "from": [], "body": {"n": str(n)}}]
        if n:
            ops.append({"op": "relate", "subject": f"s{n}", "name": "after", "object": f"s{n - 1}"})
        commit(small.pk, ops)
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
    try:
        with transaction.atomic():
            commit(large.pk, relate)
            before = frame_rows_scanned()
            with connection.cursor() as cur:  # run the checks the commit would run now
                cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
            scanned = frame_rows_scanned() - before
    finally:
        with connection.cursor() as cur:  # leave statistics of this size to later tests
            cur.execute("ANALYZE memory_frame, memory_relation, memory_framerevision")
            cur.execute("DISCARD PLANS")
    # By key, a check reads no table; read through, each of the 2 * NAMED checks of the
    # relations' frames reads ~FRAMES rows.
    assert scanned < FRAMES, scanned
