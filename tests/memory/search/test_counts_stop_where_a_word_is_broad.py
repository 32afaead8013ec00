"""In a context with a window (more than RECENT_WINDOW documents), whether a word is broad is
all its count decides past BROAD: it then selects among the window whatever its count. So
its documents are counted up to BROAD, not COUNT_CAP (each counted document is a row read:
5,000 for an everyday word of a million-event history), and an item the index cannot
answer exactly (a stem without the word itself) has its index reach counted only when
neither it nor its word holds BROAD documents (its scan reads the word's documents too).

The bounds are lowered here (a window of 100 documents, broad from 10)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.search import ranking, reach, statistics
from tests.memory.search.indexed import indexed_context, lowered_bounds

WINDOW = 100
BROAD = 10


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from lowered_bounds(monkeypatch, RECENT_WINDOW=WINDOW, BROAD=BROAD)


def context_of(slug: str, documents: int, every: int) -> Any:
    """Every `every`-th event says "parcel" (another form of the word "parcels")."""
    texts = [f"parcel note {n}" if n % every == 0 else f"filler {n}" for n in range(documents)]
    return indexed_context(slug, texts)


def count_limits(context: Any) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        ranking.plan(context.pk, [("parcel", [])], "", {}, False, frozenset())
    return [
        q["sql"].rsplit("LIMIT", 1)[1].split(")")[0].strip()
        for q in queries.captured_queries
        if "unnest(" in q["sql"] and "count(*)" in q["sql"]
    ]


def test_a_context_with_a_window_counts_up_to_broad(db: Any, small_bounds: None) -> None:
    # (the words, then what the index reads for the stem item: both up to BROAD)
    assert set(count_limits(context_of("long", 10 * WINDOW, 20))) == {str(BROAD)}


def test_a_context_within_its_window_counts_up_to_the_cap(db: Any, small_bounds: None) -> None:
    assert count_limits(context_of("short", WINDOW - 5, 20)) == [str(statistics.COUNT_CAP)]


def reach_counted(context: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    asked: list[Any] = []
    counts = reach.document_counts

    def spy(ctx: int, items: list[tuple[str, str]], *args: Any, **kwargs: Any) -> list[float]:
        asked.extend(literal for literal, _ in items)
        return counts(ctx, items, *args, **kwargs)

    monkeypatch.setattr(reach, "document_counts", spy)
    plan = ranking.plan(context.pk, [("parcels", [])], "", {}, False, frozenset())
    stem = next(item for item in plan.items if item.lexeme.startswith("="))
    assert stem.reach >= stem.estimate
    return asked


def test_a_stem_held_by_broad_documents_is_not_counted_again(
    db: Any, small_bounds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 50 documents say "parcel": the stem item (the stem, not "parcels") holds all of them.
    assert reach_counted(context_of("broad-stem", 10 * WINDOW, 20), monkeypatch) == []


def test_a_stem_held_by_few_documents_has_its_reach_counted(
    db: Any, small_bounds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 4 documents say "parcel": fewer than BROAD, so what the index reads for it is counted.
    assert len(reach_counted(context_of("narrow-stem", 10 * WINDOW, 250), monkeypatch)) == 1


def test_a_stem_whose_word_is_broad_is_not_counted_again(
    db: Any, small_bounds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "parcels" in 50 documents, another form in 2: the stem item holds 2, but its index
    # scan ('parcel' | '=parcel') reads every document saying "parcels" too, so it is broad.
    texts = [
        "parcels note" if n % 20 == 0 else "parcel memo" if n in (7, 9) else f"filler {n}"
        for n in range(10 * WINDOW)
    ]
    context = indexed_context("broad-word", texts)
    assert reach_counted(context, monkeypatch) == []
    plan = ranking.plan(context.pk, [("parcels", [])], "", {}, False, frozenset())
    stem = next(item for item in plan.items if item.lexeme.startswith("="))
    assert stem.estimate == 2 and stem.reach >= BROAD
