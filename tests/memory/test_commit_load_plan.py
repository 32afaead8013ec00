"""The commit's load finds each named frame, event and relation by a key (the unique keys
(context, frame id) and (context, sequence number), a relation's subject or object), in the
plan made for the call and in the generic plan its prepared statement keeps. With a second
index on the context alone, a planner read the whole context once per name, and a
transaction naming a thousand frames waited minutes on its load."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.limits import MAX_OPS
from memory.sql import statements
from memory.tx.engine import submit_transaction

FRAMES = 300  # enough pages that reading the table beats no index lookup


def scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of an EXPLAIN (FORMAT JSON) plan that reads a table."""
    found = [plan] if "Relation Name" in plan else []
    for child in plan.get("Plans", []):
        found.extend(scans(child))
    return found


def explain(context_id: int, names: dict[str, Any], generic: bool) -> dict[str, Any]:
    """The load's plan: for these values, or (generic) the one a prepared statement keeps."""
    with connection.cursor() as cur:
        cur.execute(statements("memory.tx")["index_lookups_only"])  # as the load is planned
        if generic:
            sql = statements("memory.tx")["load"].replace("%s", "$1", 1).replace("%s", "$2", 1)
            cur.execute("EXPLAIN (GENERIC_PLAN, FORMAT JSON) " + sql.replace("%%", "%"))
        else:
            cur.execute(
                "EXPLAIN (FORMAT JSON) " + statements("memory.tx")["load"],
                [context_id, json.dumps(names)],
            )
        (document,) = cur.fetchone()
        cur.execute("SET LOCAL enable_seqscan TO DEFAULT")
    return (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]


@pytest.mark.parametrize("generic", [False, True], ids=["planned-per-call", "prepared"])
def test_each_named_frame_and_event_is_found_by_its_unique_key(db: Any, generic: bool) -> None:
    if generic and connection.pg_version < 160000:
        pytest.skip("EXPLAIN (GENERIC_PLAN) needs PostgreSQL 16")
    context = create_context("planned")
    ops = [
        {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}} for i in range(FRAMES)
    ]
    ops += [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(FRAMES - 1)
    ]
    for start in range(0, len(ops), MAX_OPS):
        chunk = ops[start : start + MAX_OPS]
        submit_transaction(context.pk, data={"base_version": None, "reason": "seed", "ops": chunk})
    with connection.cursor() as cur:
        # Statistics that describe these tables, whatever earlier tests left (the stale case
        # is tests/memory/test_commit_load_after_tables_grew.py): what autovacuum keeps.
        cur.execute("ANALYZE memory_frame, memory_event, memory_relation")
    names = {
        "frames": [f"n{i}" for i in range(0, FRAMES, 7)],
        "seqs": [1, 2],
        "relations": [[f"n{i}", "next", f"n{i + 1}"] for i in range(0, FRAMES - 1, 5)],
    }
    plan = explain(context.pk, names, generic)
    nodes = [
        node
        for node in scans(plan)
        if node["Relation Name"] in ("memory_frame", "memory_event", "memory_relation")
    ]
    assert {node["Relation Name"] for node in nodes} >= {"memory_frame", "memory_event"}, nodes
    for node in nodes:
        # A lookup: an index condition on a key, never a whole table or a whole context read
        # and filtered (a sequential scan, a full index scan, an index on the context alone).
        condition = node.get("Index Cond") or node.get("Recheck Cond") or ""
        keys = {
            "memory_frame": ("frame_id", "(id ="),
            "memory_event": ("seq",),
            "memory_relation": ("subject_id", "object_id"),
        }[node["Relation Name"]]
        assert node["Node Type"] != "Seq Scan", node
        assert any(key in condition for key in keys), (node["Relation Name"], node)
