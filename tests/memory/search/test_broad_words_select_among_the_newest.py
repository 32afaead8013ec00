"""In a context of more than RECENT_WINDOW documents, a word held by BROAD documents or
more selects among the newest RECENT_WINDOW only (and `total_exact` says the count may be
short), while a rarer word finds its documents wherever they are. Before, such a word read
every document holding it: a two-word question over a million events took 2-3 s.

The bounds are lowered here (a window of 20 documents, broad from 10) so the rule is seen on
contexts of 60 and 195 documents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory.contexts import create_context
from memory.models import Event
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction
from tests.memory.search.indexed import lowered_bounds

WINDOW = 20
BROAD = 10


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from lowered_bounds(monkeypatch, RECENT_WINDOW=WINDOW, BROAD=BROAD, BROAD_PHRASE=BROAD)


def context_of(slug: str, contents: list[str]) -> Any:
    """A context whose events say `contents`, oldest first, each at a time of its own (the
    window is a time: events appended together share theirs)."""
    context = create_context(slug, capacity_tokens=50_000_000)
    for text in contents:
        append_event(context.pk, kind="agent_message", content=text)
    drain(batch_size=500)
    return context


def refs(result: dict[str, Any]) -> list[str]:
    return [hit["ref"] for hit in result["hits"]]


def history(old_broad: int, filler: int, new_broad: int) -> list[str]:
    """`old_broad` old events saying "parcel" (the first also "zeppelin"), then `filler`
    events saying neither, then `new_broad` new ones saying "parcel"."""
    old = [f"parcel {'zeppelin ' if i == 0 else ''}old {i}" for i in range(old_broad)]
    middle = [f"filler note {i}" for i in range(filler)]
    new = [f"parcel new {i}" for i in range(new_broad)]
    return old + middle + new


def test_a_broad_word_selects_among_the_newest_documents(db: Any, small_bounds: None) -> None:
    # 15 of 195 documents say it: broad, under COMMON_FRACTION, so it selects
    context = context_of("broad-recent", history(old_broad=12, filler=180, new_broad=3))
    result = search(context, "parcel", limit=50)
    assert sorted(refs(result)) == ["@e193", "@e194", "@e195"]  # in the newest 20 only
    assert result["total"] == 3 and result["total_exact"] is False


def test_a_common_word_selects_among_the_newest_documents(db: Any, small_bounds: None) -> None:
    # 35 of 60 documents say it: common, it selects (its newest) since nothing rarer does
    context = context_of("common-recent", history(old_broad=30, filler=25, new_broad=5))
    result = search(context, "parcel", limit=50)
    assert sorted(refs(result)) == [f"@e{seq}" for seq in range(56, 61)]
    assert result["total"] == 5 and result["total_exact"] is False


def test_a_rare_word_finds_its_document_outside_the_window(db: Any, small_bounds: None) -> None:
    contents = [*history(old_broad=12, filler=180, new_broad=3), "zeppelin filler new 1"]
    context = context_of("rare-anywhere", contents)
    found = refs(search(context, "zeppelin parcel", limit=50))
    # the oldest event, 195 documents before the newest, holds both words: it weighs the
    # broad one too and comes before the new event holding the rare word alone
    assert found[:2] == ["@e1", "@e196"]


def test_a_filtered_search_is_not_limited_to_the_newest(db: Any, small_bounds: None) -> None:
    context = context_of("filtered-whole", history(old_broad=12, filler=180, new_broad=3))
    until = Event.objects.get(context=context, seq=13).created_at
    result = search(context, "parcel", until=until, limit=50)
    assert sorted(refs(result)) == sorted(f"@e{seq}" for seq in range(1, 13))
    assert result["total_exact"] is True


def test_an_old_frame_is_found_by_a_broad_word(db: Any, small_bounds: None) -> None:
    context = create_context("old-frame", capacity_tokens=50_000_000)
    derive = {"op": "derive", "id": "depot", "from": [], "body": {"note": "parcel depot"}}
    submit_transaction(context.pk, data={"base_version": None, "reason": "r", "ops": [derive]})
    for text in history(old_broad=12, filler=180, new_broad=3):
        append_event(context.pk, kind="agent_message", content=text)
    drain(batch_size=500)
    found = refs(search(context, "parcel", limit=50))
    assert "depot" in found and "@e1" not in found  # the frame is older than every event


def test_a_context_smaller_than_the_window_is_searched_whole(db: Any, small_bounds: None) -> None:
    context = context_of("small-whole", history(old_broad=12, filler=2, new_broad=3))
    result = search(context, "parcel", limit=50)
    assert result["total"] == 15 and result["total_exact"] is True
