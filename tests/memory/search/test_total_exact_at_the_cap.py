"""`total_exact` says whether `total` is the real number of matches: exactly TOTAL_CAP
matches is exact, TOTAL_CAP + 1 is not. Before, a query whose common word selected its
newest WIDE_POOL documents answered `total_exact` false whenever that many matched, even
when those were all the documents holding it."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context
from memory.search.indexer import drain
from memory.search.query import TOTAL_CAP, search
from memory.search.ranking import WIDE_POOL
from memory.timeline.bulk import append_events


def context_saying(slug: str, word: str, count: int) -> Any:
    context = create_context(slug, capacity_tokens=50_000_000)
    items = [{"kind": "agent_message", "content": f"{word} note {i}"} for i in range(count)]
    for start in range(0, count, 500):
        append_events(context.pk, items[start : start + 500])
    drain(batch_size=500)
    return context


@pytest.mark.parametrize("count", [TOTAL_CAP - 1, TOTAL_CAP])
def test_up_to_the_cap_the_total_is_exact(db: Any, count: int) -> None:
    assert WIDE_POOL == TOTAL_CAP  # the word is common: it selects its newest WIDE_POOL
    context = context_saying("at-the-cap", "marmot", count)
    result = search(context, "marmot")
    assert result["total"] == count and result["total_exact"] is True


def test_one_past_the_cap_the_total_is_not_exact(db: Any) -> None:
    context = context_saying("past-the-cap", "marmot", TOTAL_CAP + 1)
    result = search(context, "marmot")
    assert result["total"] == TOTAL_CAP and result["total_exact"] is False
