"""Recall outside a transaction runs as a prepared statement (planning it cost as much as
running it); it must answer exactly like the unprepared statement used inside transactions,
survive a session whose prepared statements were dropped, and still read a node too big to
prefetch from the same snapshot."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction

from memory.contexts import create_context
from memory.recall.graph import recall
from memory.tx.engine import submit_transaction

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def graph():
    context = create_context("prepared-graph")
    ops = [{"op": "derive", "id": "base", "body": {"note": "x" * 5000}}]
    for i in range(40):
        sources = ["base"] + [f"n-{j}" for j in range(max(0, i - 3), i)]
        ops.append({"op": "derive", "id": f"n-{i}", "from": sources, "body": {"i": str(i)}})
    ops.append({"op": "relate", "subject": "n-39", "name": "depends-on", "object": "n-2"})
    submit_transaction(context.pk, data={"base_version": None, "reason": "seed", "ops": ops})
    return context


def pages(context, **params):
    found = [recall(context, **params)]
    while found[-1]["next_cursor"]:
        found.append(recall(context, cursor=found[-1]["next_cursor"], **params))
    return [{**page, "next_cursor": bool(page["next_cursor"])} for page in found]


@pytest.mark.parametrize("direction", ["ancestors", "descendants", "both"])
def test_prepared_and_unprepared_recall_give_the_same_pages(graph, direction):
    params = {"frame_id": "n-39", "depth": 4, "direction": direction, "max_nodes": 7}
    if direction == "descendants":
        params["frame_id"] = "base"
    assert not connection.in_atomic_block
    prepared = pages(graph, **params)
    with transaction.atomic():
        unprepared = pages(graph, **params)
    assert prepared == unprepared
    assert len(prepared) > 1


def test_recall_prepares_again_after_the_session_dropped_its_statements(graph):
    first = recall(graph, frame_id="n-39", depth=2)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    again = recall(graph, frame_id="n-39", depth=2)
    assert (again["nodes"], again["edges"]) == (first["nodes"], first["edges"])


def test_a_node_too_big_to_prefetch_is_read_in_the_same_snapshot(graph):
    page = recall(graph, frame_id="base", depth=1, page_bytes=1000)
    nodes: list[Any] = page["nodes"]
    assert [n["id"] for n in nodes] == ["base"]
    assert nodes[0]["body"] == {"note": "x" * 5000}
