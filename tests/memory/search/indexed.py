"""A context of many events for search tests, appended in bulk and indexed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory.contexts import create_context
from memory.search import ranking, statistics
from memory.search.indexer import drain
from memory.timeline.bulk import append_events


def indexed_context(slug: str, texts: list[str], batch: int = 500) -> Any:
    """A context whose agent messages say `texts`, oldest first, indexed."""
    context = create_context(slug, capacity_tokens=50_000_000)
    for start in range(0, len(texts), batch):
        chunk = [{"kind": "agent_message", "content": t} for t in texts[start : start + batch]]
        append_events(context.pk, chunk)
    drain(batch_size=500)
    return context


def lowered_bounds(monkeypatch: pytest.MonkeyPatch, **bounds: int) -> Iterator[None]:
    """For a fixture (`yield from`): search's size bounds lowered for a test, by name
    (`RECENT_WINDOW` of `statistics`, the others of `ranking`), the kept statistics
    forgotten before and after."""
    for name, value in bounds.items():
        monkeypatch.setattr(statistics if name == "RECENT_WINDOW" else ranking, name, value)
    statistics.forget_statistics()
    yield
    statistics.forget_statistics()
