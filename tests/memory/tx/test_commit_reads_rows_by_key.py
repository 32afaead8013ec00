"""A commit reads the rows it names, and checks its foreign keys, by key: each frame by
(context, frame id), each event by (context, seq), a relation by its subject or object,
whatever the tables' size and whatever their statistics said when the plan was made. Read
through instead, a transaction naming a thousand frames waited minutes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.limits import MAX_OPS
from memory.models import Context
from memory.sql import statements
from memory.tx.engine import submit_transaction

GROWN_FRAMES = 2000
CHECKED_NAMES = 200
LOADED_NAMES = 400
PLANNED_FRAMES = 300  # enough pages that reading the table beats no index lookup
GRAPH_FRAMES = 200


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
    """In the plan made per call and in the generic one a prepared statement keeps; with an
    index on the context alone a planner read the whole context once per name."""
    if generic and connection.pg_version < 160000:
        pytest.skip("EXPLAIN (GENERIC_PLAN) needs PostgreSQL 16")
    context = create_context("planned")
    ops = [
        {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}}
        for i in range(PLANNED_FRAMES)
    ]
    ops += [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(PLANNED_FRAMES - 1)
    ]
    for start in range(0, len(ops), MAX_OPS):
        chunk = ops[start : start + MAX_OPS]
        submit_transaction(context.pk, data={"base_version": None, "reason": "seed", "ops": chunk})
    with connection.cursor() as cur:
        # Statistics that describe these tables, whatever earlier tests left (the stale case
        # is the test after this one): what autovacuum keeps.
        cur.execute("ANALYZE memory_frame, memory_event, memory_relation")
    names = {
        "frames": [f"n{i}" for i in range(0, PLANNED_FRAMES, 7)],
        "seqs": [1, 2],
        "relations": [[f"n{i}", "next", f"n{i + 1}"] for i in range(0, PLANNED_FRAMES - 1, 5)],
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


def test_a_plan_made_on_empty_tables_still_finds_each_name_by_its_key(
    transactional_db: Any,
) -> None:
    """The load stays prepared for the connection's life: a plan made on near-empty tables
    still finds each named frame by its unique key once a context holds thousands (ANALYZE
    never runs inside one long transaction: an import, a replay, a test run)."""
    with connection.cursor() as cur:  # the tables as a new database has them: a page or none
        cur.execute("VACUUM ANALYZE memory_frame, memory_event, memory_relation")
        cur.execute("DISCARD PLANS")
    small = create_context("small")
    for n in range(8):  # past the five runs after which a prepared statement keeps one plan
        commit(small.pk, [{"op": "derive", "id": f"s{n}", "from": [], "body": {"n": str(n)}}])
    large = create_context("large")
    for start in range(0, GROWN_FRAMES, MAX_OPS):
        ops = [
            {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}}
            for i in range(start, start + MAX_OPS)
        ]
        commit(large.pk, ops)
    relate = [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(LOADED_NAMES)
    ]
    create = [
        {"op": "derive", "id": f"m{i}", "from": [f"n{i}"], "body": {}} for i in range(LOADED_NAMES)
    ]
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
    assert scanned < GROWN_FRAMES, scanned


def test_the_checks_of_a_commit_read_no_table_through(transactional_db: Any) -> None:
    """Foreign-key checks planned while the tables held a page or two still look rows up by key
    once the tables grew: the commit keeps sequential scans off (`memory.tx.loader`), so its
    checks are planned as lookups (planned on a tiny table they read it through, per row)."""
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
    for start in range(0, GROWN_FRAMES, MAX_OPS):
        ops = [
            {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}}
            for i in range(start, start + MAX_OPS)
        ]
        commit(large.pk, ops)
    relate = [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(CHECKED_NAMES)
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
    # By key, a check reads no table; read through, each of the 2 * CHECKED_NAMES checks of the
    # relations' frames reads ~GROWN_FRAMES rows.
    assert scanned < GROWN_FRAMES, scanned


def graph(slug: str) -> Context:
    """GRAPH_FRAMES frames in a chain of `next` relations and a hub `n0` related to every one."""
    context = create_context(slug)
    ops: list[dict[str, Any]] = [
        {"op": "derive", "id": f"n{i}", "from": [], "body": {"i": str(i)}}
        for i in range(GRAPH_FRAMES)
    ]
    ops += [
        {"op": "relate", "subject": f"n{i}", "name": "next", "object": f"n{i + 1}"}
        for i in range(GRAPH_FRAMES - 1)
    ]
    ops += [
        {"op": "relate", "subject": "n0", "name": "hub", "object": f"n{i}"}
        for i in range(2, GRAPH_FRAMES)
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
    """Statistics that call the tables empty (an ANALYZE after tests cleaned up) do not make
    the load walk every relation and every frame per name."""
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
    # the subject's relations (the hub has GRAPH_FRAMES of them). The old plan read every
    # relation, and every frame for each, per name: 30 million rows here.
    assert rows_read(plan) <= len(names["frames"]) + len(relations) * (GRAPH_FRAMES + 2)
