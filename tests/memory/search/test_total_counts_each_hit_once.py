"""A question's `total` counts each document once: one found by its words and by meaning
both (R61's hybrid first stage) is one hit, so paging by `next_offset` ends where the hits
end, and every page's total is the number of distinct hits paged through."""

from __future__ import annotations

from typing import Any

from memory.search import semantic
from memory.search.indexer import drain
from memory.search.query import search

QUESTION = "which customer payment reminder was late this week"


def test_total_is_the_number_of_distinct_hits(release_team: Any) -> None:
    agent = release_team
    # More word hits than the head reordered by meaning, every one close in meaning too.
    for n in range(semantic.HEAD + 30):
        agent.observe(f"payment reminder {n} sent to customer acct-{n} about a late invoice")
    for n in range(10):
        agent.observe(f"deploy pipeline note {n}: build green")
    drain()
    seen: list[str] = []
    totals = set()
    offset: int | None = 0
    while offset is not None:
        page = search(agent.context, QUESTION, limit=20, offset=offset)
        assert page["hits"] or offset == 0
        seen += [hit["ref"] for hit in page["hits"]]
        totals.add(page["total"])
        offset = page["next_offset"]
    assert len(seen) == len(set(seen))
    assert totals == {len(seen)}
    assert len(seen) >= semantic.HEAD + 30
