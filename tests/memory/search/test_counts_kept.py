"""In a large context, how many documents hold a query word is counted once and kept for a
while (like the context's size): the next query that shares the word does not count it
again, and ranks exactly as if it had."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.contexts import create_context
from memory.search import statistics
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.bulk import append_events

WORDS = ["alpha", "beta", "gamma", "delta"]


@pytest.fixture
def large(db: Any) -> Any:
    context = create_context("large-search")
    items = [
        {"kind": "agent_message", "content": f"{WORDS[i % 4]} {WORDS[(i // 4) % 4]} note {i}"}
        for i in range(statistics.CACHED_FROM)
    ]
    for start in range(0, len(items), 500):
        append_events(context.pk, items[start : start + 500])
    drain(batch_size=500)
    statistics.forget_statistics()
    yield context
    statistics.forget_statistics()


def counted_items(queries: CaptureQueriesContext) -> list[str]:
    """The count statements among the captured queries, as sent (items included)."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if "unnest(" in q["sql"] and f"LIMIT {statistics.COUNT_CAP}" in q["sql"]
    ]


def hits(result: dict[str, Any]) -> list[tuple[str, float]]:
    return [(h["ref"], h["score"]) for h in result["hits"]]


def test_a_word_counted_for_one_query_is_not_counted_again_for_the_next(large: Any) -> None:
    search(large, "alpha beta")
    with CaptureQueriesContext(connection) as queries:
        kept = search(large, "alpha gamma", limit=50)
    statements = counted_items(queries)
    assert len(statements) == 1, statements
    assert "'gamma'" in statements[0] and "'alpha'" not in statements[0], statements[0]
    statistics.forget_statistics()
    with CaptureQueriesContext(connection) as queries:
        fresh = search(large, "alpha gamma", limit=50)
    assert "'alpha'" in counted_items(queries)[0]
    assert hits(kept) == hits(fresh) and kept["total"] == fresh["total"]


def test_counts_are_kept_per_filter(large: Any) -> None:
    search(large, "alpha beta")
    with CaptureQueriesContext(connection) as queries:
        search(large, "alpha", thread="other")
    statements = counted_items(queries)
    assert len(statements) == 1 and "'alpha'" in statements[0], statements


def test_a_small_context_counts_on_every_search(db: Any) -> None:
    context = create_context("small-search")
    append_events(context.pk, [{"kind": "agent_message", "content": "alpha beta"}])
    drain()
    search(context, "alpha")
    with CaptureQueriesContext(connection) as queries:
        search(context, "alpha")
    assert len(counted_items(queries)) == 1
