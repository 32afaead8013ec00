"""The commit's load reads a few rows per name even when the statistics say the tables are
empty (an ANALYZE of a new or emptied database, as the test database sees after tests clean
up): the subject and object of a named relation are found by their unique keys, then its
rows by the subject. Planned on such statistics, the load once walked every relation and,
for each, every frame twice: replaying a 600-frame graph waited minutes on it."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from memory.contexts import create_context
from memory.limits import MAX_OPS
from memory.models import Context
from memory.sql import statements
from memory.tx.engine import submit_transaction

FRAMES = 200


def graph(slug: str) -> Context:
    """FRAMES frames in a chain of `next` relations and a hub `n0` related to every one."""
    context = create_context(slug)
    ops: list[dict[str, Any]] = [
        {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}} for i in range(FRAMES)
    ]
    ops += [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(FRAMES - 1)
    ]
    ops += [
        {"op": "relate", "subject": "n0", "name": "hub", "object": f"n{i}"}
        for i in range(2, FRAMES)
    ]
    for start in range(0, len(ops), MAX_OPS):
        chunk = ops[start : start + MAX_OPS]
        submit_transaction(context.pk, data={"base_version": None, "reason": "g", "ops": chunk})
    return context


def rows_read(plan: dict[str, Any]) -> int:
    """Rows every table scan of an EXPLAIN (ANALYZE, FORMAT JSON) plan read, in all its loops
    (kept and filtered out alike)."""
    own = 0
    if "Relation Name" in plan:
        each = plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)
        own = int(each * plan.get("Actual Loops", 1))
    return own + sum(rows_read(child) for child in plan.get("Plans", []))


def test_the_load_reads_a_few_rows_per_name_on_empty_statistics(db: Any) -> None:
    # Pages that the statistics will call empty: rows written, then deleted, then ANALYZE.
    filler = graph("filler")
    Context.objects.filter(pk=filler.pk).delete()
    with connection.cursor() as cur:
        cur.execute("ANALYZE memory_frame, memory_relation, memory_event")
        cur.execute("SELECT reltuples FROM pg_class WHERE relname = 'memory_relation'")
        assert cur.fetchone()[0] == 0  # what the planner believes from here on
    context = graph("walked")
    relations = [["n0", "hub", f"n{i}"] for i in range(2, 12)] + [["n5", "next", "n6"]]
    names = {"frames": ["n1", "n7"], "seqs": [], "relations": relations}
    with connection.cursor() as cur:
        cur.execute(statements("memory.tx")["index_lookups_only"])  # as the load is planned
        cur.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + statements("memory.tx")["load"],
            [context.pk, json.dumps(names)],
        )
        (document,) = cur.fetchone()
        cur.execute("SET LOCAL enable_seqscan TO DEFAULT")
    plan = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    # By keys: one row per named frame; per relation its subject, its object and at most
    # the subject's relations (the hub has FRAMES of them). The old plan read every
    # relation, and every frame for each, per name: 30 million rows here.
    assert rows_read(plan) <= len(names["frames"]) + len(relations) * (FRAMES + 2)
