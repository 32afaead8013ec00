"""Search stays flat in history (issue 30): in a context of more than RECENT_WINDOW
documents, a broad word's place in the plan (selecting, or only scoring) is chosen by the
documents it selects among, the newest RECENT_WINDOW, so a history ten times as long with
the same words gives the same plan, and as much work, as a context of the window's size.
Before, the longer history made the same words "common": they then selected their newest
WIDE_POOL documents each (ten times the candidates), and the scaling table's search row
grew 2.56x from 10k to 100k events.

The bounds are lowered here (a window of 100 documents, broad from 10, a budget of 30)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory.search import ranking, vectors
from tests.memory.search.indexed import indexed_context, lowered_bounds

WINDOW = 100


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from lowered_bounds(
        monkeypatch, RECENT_WINDOW=WINDOW, BROAD=10, BROAD_PHRASE=10, ROW_BUDGET=30
    )


def context_of(slug: str, documents: int) -> Any:
    """Every 20th event says "parcel", every 20th (another) "courier": 5% each."""
    texts = [
        "parcel note" if n % 20 == 0 else "courier note" if n % 20 == 1 else f"filler {n}"
        for n in range(documents)
    ]
    return indexed_context(slug, texts)


def selecting(context: Any) -> list[bool]:
    plan = ranking.plan(context.pk, [("parcel", []), ("courier", [])], "", {}, False, frozenset())
    assert plan.since is not None  # both are past the window
    return [item.common is None for item in plan.items]


def test_a_longer_history_of_the_same_words_plans_the_same(db: Any, small_bounds: None) -> None:
    short = context_of("short", WINDOW + 5)
    long = context_of("long", 10 * WINDOW)
    assert selecting(long) == selecting(short)
    assert selecting(short)[0] and selecting(short)[2]  # both words select


def test_a_phrase_of_broad_word_forms_selects_among_the_newest(db: Any, small_bounds: None) -> None:
    """The phrase matches any form of each word: when other forms are broad ("parcels",
    "couriers" every 20th event each) its index scan reads all their documents, so it
    selects among the newest though the words as asked are held by none."""
    texts = [
        "parcels note" if n % 20 == 0 else "couriers note" if n % 20 == 1 else f"filler {n}"
        for n in range(10 * WINDOW)
    ]
    context = indexed_context("forms", texts)
    plan = ranking.plan(context.pk, [("parcel", []), ("courier", [])], "", {}, False, frozenset())
    assert plan.items[0].estimate == 0  # "parcel" itself is in no document
    phrase = plan.items[-1]
    assert "<->" in phrase.literal
    assert phrase.recent is not None and phrase.phrase_scale is not None


def test_a_stem_item_reading_a_broad_word_selects_among_the_newest(
    db: Any, small_bounds: None
) -> None:
    """The stem item (another form, in a document not saying the word) is found by the
    index with every document saying the word, left out only on recheck: when the word is
    broad, so is the item's scan, and it selects among the newest though few hold it."""
    texts = [
        "parcel note" if n % 20 == 0 else "parcels note" if n == 7 else f"filler {n}"
        for n in range(10 * WINDOW)
    ]
    context = indexed_context("stems", texts)
    plan = ranking.plan(context.pk, [("parcel", [])], "", {}, False, frozenset())
    stem = next(item for item in plan.items if item.lexeme.startswith(vectors.STEM))
    assert stem.estimate < ranking.BROAD <= stem.reach
    assert stem.recent is not None
