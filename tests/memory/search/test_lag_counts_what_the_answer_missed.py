"""A search's `lag.pending_intents` counts what its answer could not include: items still
waiting for the indexer and documents indexed after the search took its view of the index
(a cursor page's view is its first page's). So `0` means nothing written before the search
was missed, even when the indexer finished a document while the search was running."""

from __future__ import annotations

from typing import Any

from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.bulk import append_events
from tests.memory.search.indexed import indexed_context


def test_documents_indexed_after_the_view_count_as_pending(db: Any) -> None:
    context = indexed_context("lag-view", [f"osprey nest {n}" for n in range(6)])
    first = search(context, "osprey", limit=2)
    assert first["lag"]["pending_intents"] == 0 and first["next_cursor"]

    append_events(context.pk, [{"kind": "agent_message", "content": "osprey chick"}])
    waiting = search(context, "osprey", limit=2, cursor=first["next_cursor"])
    drain()
    indexed = search(context, "osprey", limit=2, cursor=first["next_cursor"])
    fresh = search(context, "osprey", limit=10)

    assert waiting["lag"]["pending_intents"] == 1  # its intent waits
    assert indexed["lag"]["pending_intents"] == 1  # indexed, but after this view
    assert "chick" not in str(indexed["hits"])
    assert fresh["lag"]["pending_intents"] == 0
    assert fresh["total"] == 7
