"""A large context's size is kept for a while, and measured again once the index may have
grown by `statistics.GROWTH` of it: while a big load is indexed, a stale small size would
make a word look common (and a common word selects among its newest documents only)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context
from memory.search import statistics
from memory.search.cursor import bound
from memory.search.indexer import drain
from memory.timeline.bulk import append_events


def add(context: Any, count: int, start: int) -> None:
    items = [
        {"kind": "tool_result", "content": f"reading {n} of the quokka survey"}
        for n in range(start, start + count)
    ]
    for first in range(0, len(items), 500):
        append_events(context.pk, items[first : first + 500])
    drain(batch_size=500)


@pytest.fixture
def large(db: Any) -> Any:
    context = create_context("growing-search")
    add(context, statistics.CACHED_FROM, 0)
    statistics.forget_statistics()
    yield context
    statistics.forget_statistics()


def test_a_kept_size_is_measured_again_once_the_index_grew_by_a_tenth(large: Any) -> None:
    size = statistics.CACHED_FROM
    assert statistics.context_size(large.pk, False, bound())[0] == size
    few = int(statistics.GROWTH * size) // 2
    add(large, few, size)
    # Grown by less than GROWTH: the kept size stands (counting costs a scan).
    assert statistics.context_size(large.pk, False, bound())[0] == size
    more = int(statistics.GROWTH * size)
    add(large, more, size + few)
    assert statistics.context_size(large.pk, False, bound())[0] == size + few + more
