"""A search without filters does not count a word PostgreSQL's statistics show in well
over the cap of the context's documents, even if every other document of the table held it
(`statistics.SURE`): the count would stop at the cap, and reaching it reads the word's whole
posting list. The estimate is the one the count would have given. A word the statistics
cannot vouch for, an item leaving some of its lexeme's documents out, or a filtered search
is counted as before.

The bounds are lowered here (a window of 100 documents, broad from 10)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.search import ranking, statistics
from tests.memory.search.indexed import indexed_context, lowered_bounds

WINDOW = 100
BROAD = 10


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from lowered_bounds(monkeypatch, RECENT_WINDOW=WINDOW, BROAD=BROAD)


def analysed(context: Any) -> Any:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    statistics.forget_statistics()
    return context


def counted_items(context: Any, window: bool = True) -> tuple[list[str], ranking.Plan]:
    """The tsquery literals whose documents the plan counted, and the plan."""
    with CaptureQueriesContext(connection) as queries:
        plan = ranking.plan(
            context.pk, [("parcel", []), ("zebra", [])], "", {}, False, frozenset(), window
        )
    asked = []
    for query in queries.captured_queries:
        if "unnest(" in query["sql"] and "count(*)" in query["sql"]:
            # unnest('{''a'',"''b'' | ''c''"}'::tsquery[]): the array's elements
            array = query["sql"].split("unnest('{", 1)[1].split("}'::tsquery[]", 1)[0]
            asked += [e.replace("''", "'") for e in next(csv.reader([array]))]
    return asked, plan


def half_parcels(slug: str, documents: int) -> Any:
    """Every other event says "parcel"; one says "zebra"."""
    texts = [
        "zebra crossing" if n == 1 else f"parcel {n}" if n % 2 == 0 else f"filler {n}"
        for n in range(documents)
    ]
    return analysed(indexed_context(slug, texts))


def test_a_word_the_statistics_show_everywhere_is_not_counted(db: Any, small_bounds: None) -> None:
    asked, plan = counted_items(half_parcels("common", 10 * WINDOW))
    assert "'parcel'" not in asked
    assert "'zebra'" in asked
    parcel = next(item for item in plan.items if item.lexeme == "parcel")
    zebra = next(item for item in plan.items if item.lexeme == "zebra")
    # As the count would have said: past the cap, then the statistics' share.
    assert 400 <= parcel.estimate <= 600
    assert zebra.estimate == 1


def test_an_item_leaving_out_some_of_its_words_documents_is_counted(
    db: Any, small_bounds: None
) -> None:
    # Half the documents say "parcels". The stem item of "parcels" (another form of it,
    # not "parcels" itself) holds none of them, though its lexeme (the stem marked) is
    # listed in every one: the statistics do not bound its count.
    texts = [f"parcels {n}" if n % 2 == 0 else f"filler {n}" for n in range(10 * WINDOW)]
    context = analysed(indexed_context("stem", texts))
    with CaptureQueriesContext(connection):
        plan = ranking.plan(context.pk, [("parcels", [])], "", {}, False, frozenset())
    stem = next(item for item in plan.items if item.lexeme == "=parcel")
    assert stem.estimate == 0


def test_a_filtered_search_counts_every_word(db: Any, small_bounds: None) -> None:
    asked, plan = counted_items(half_parcels("filtered", 10 * WINDOW), window=False)
    assert "'parcel'" in asked
    parcel = next(item for item in plan.items if item.lexeme == "parcel")
    assert parcel.estimate == statistics.COUNT_CAP or parcel.estimate == 500


def test_a_word_common_only_outside_the_context_is_counted(db: Any, small_bounds: None) -> None:
    # Another context holds most of the table, every one of its documents saying "parcel":
    # the statistics cannot tell how many of this context's documents do.
    indexed_context("elsewhere", [f"parcel {n}" for n in range(20 * WINDOW)])
    context = analysed(indexed_context("here", [f"filler {n}" for n in range(2 * WINDOW)]))
    asked, plan = counted_items(context)
    assert "'parcel'" in asked
    parcel = next(item for item in plan.items if item.lexeme == "parcel")
    assert parcel.estimate == 0
