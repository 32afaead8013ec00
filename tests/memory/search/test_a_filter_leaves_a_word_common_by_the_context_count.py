"""A filtered search is never limited to the newest documents, but a word is common, and
selects only its newest WIDE_POOL documents, when the documents holding it that pass the
filters are more than a tenth of all the context's documents (counted without the filters):
there paging stops, whatever the filter (docs/search.md, paging through every match)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory.contexts import create_context
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.bulk import append_events
from tests.memory.search.indexed import lowered_bounds

POOL = 10


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from lowered_bounds(monkeypatch, WIDE_POOL=POOL)


def context_of(slug: str, sightings: int, others: int) -> Any:
    context = create_context(slug, capacity_tokens=50_000_000)
    events = [{"kind": "agent_message", "content": f"filler note {n}"} for n in range(others)]
    events += [{"kind": "tool_result", "content": f"marmot sighting {n}"} for n in range(sightings)]
    append_events(context.pk, events)
    drain(batch_size=500)
    return context


def test_a_word_in_over_a_tenth_of_the_context_stops_at_its_newest_despite_a_filter(
    db: Any, small_pool: None
) -> None:
    context = context_of("marmots-common", sightings=30, others=10)  # 30 of 40
    result = search(context, "marmot", kind="tool_result", limit=100)
    assert len(result["hits"]) == result["total"] == POOL
    assert result["total_exact"] is False
    assert result["next_cursor"] is None


def test_a_word_under_a_tenth_of_the_context_pages_through_every_match(
    db: Any, small_pool: None
) -> None:
    # Every document passing the filter says it, but only 20 of the context's 320 do.
    context = context_of("marmots-rare", sightings=20, others=300)
    result = search(context, "marmot", kind="tool_result", limit=100)
    assert len(result["hits"]) == result["total"] == 20
    assert result["total_exact"] is True
