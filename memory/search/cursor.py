"""Search cursors: page through every match, past `query.RANK_POOL`, with no
repeats and no skips while new documents arrive.

How it works: docs/internals.md, section `memory/search/cursor.py`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from memory.read.paging import SignedCursor
from memory.search.statistics import context_size, recent_since
from memory.sql import named_row, statements

SALT = "morphz.search.cursor"


@dataclass(frozen=True)
class Snapshot:
    """What the first page ranked by: the documents up to `bound`, as measured then."""

    bound: int  # the largest document id searched
    documents: int  # the context's documents (`statistics.context_size`)
    average: float  # their average length in words
    since: str | None  # where the newest RECENT_WINDOW begin (ISO 8601), when limited
    estimates: list[float]  # each ranking item's document count (`ranking.plan`)
    reaches: list[float] | None = None  # the documents each item's index scan reads
    # The languages its query was stemmed in (`languages.held`); None in a cursor from
    # before they were kept (read again then).
    languages: list[str] | None = None

    def since_time(self) -> datetime | None:
        """`since` as a datetime."""
        return datetime.fromisoformat(self.since) if self.since else None


def bound() -> int:
    """The largest search document id now (0 when there is none)."""
    with connection.cursor() as cursor:
        cursor.execute(statements("memory.search")["largest_document"])
        found = named_row(cursor)
    assert found is not None  # an aggregate always answers one row
    return int(found["bound"])


def measured(
    ctx: int, include_tx: bool, window: bool, snapshot: Snapshot | None
) -> tuple[int, float, datetime | None, int]:
    """(documents, average length, where the newest begin, the largest document id): as
    now (`memory.search.statistics`; no window unless `window`), or as the first page of
    the cursor measured them."""
    if snapshot is not None:
        return snapshot.documents, snapshot.average, snapshot.since_time(), snapshot.bound
    last = bound()
    documents, average = context_size(ctx, include_tx, last)
    return documents, average, recent_since(ctx, include_tx, last) if window else None, last


CURSOR = SignedCursor(SALT, restart="search again without a cursor")
refused = CURSOR.refused  # a cursor the ranking cannot use: 400 `invalid_cursor`


def fingerprint(q: str, filters: dict[str, Any]) -> str:
    """A short hash of the query and its filters: a cursor is bound to them."""
    return CURSOR.fingerprint({"q": q, **filters})


def issue(ctx: int, query: str, snapshot: Snapshot, offset: int) -> str:
    """The cursor of the page starting at `offset` (`query`: `fingerprint`)."""
    return CURSOR.issue(ctx, query, offset, s=asdict(snapshot))


def read(cursor: Any, ctx: int, query: str) -> tuple[Snapshot, int]:
    """The snapshot and offset a cursor stands for; InvalidRequest `invalid_cursor` (reason
    `malformed`, `bad_signature`, `other_context` or `other_query`) otherwise."""
    at = CURSOR.read(cursor, ctx, query)
    try:
        snapshot = Snapshot(**at.fixed["s"])
    except (KeyError, TypeError):
        raise CURSOR.refused("malformed cursor", "malformed") from None
    return snapshot, at.offset
