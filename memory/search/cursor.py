"""Search cursors: page through every match, past `query.RANK_POOL`, with no
repeats and no skips while new documents arrive.

How it works: docs/internals.md, section `memory/search/cursor.py`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.core import signing
from django.db import connection

from memory.errors import ErrorCode, InvalidRequest
from memory.search.statistics import context_size, recent_since

SALT = "morphz.search.cursor"


@dataclass(frozen=True)
class Snapshot:
    """What the first page ranked by: the documents up to `bound`, as measured then."""

    bound: int  # the largest document id searched
    documents: int  # the context's documents (`statistics.context_size`)
    average: float  # their average length in words
    since: str | None  # where the newest RECENT_WINDOW begin (ISO 8601), when limited
    estimates: list[float]  # each ranking item's document count (`ranking.plan`)

    def since_time(self) -> datetime | None:
        """`since` as a datetime."""
        return datetime.fromisoformat(self.since) if self.since else None


def bound() -> int:
    """The largest search document id now (0 when there is none)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM memory_searchdocument")
        found: int = cursor.fetchone()[0]
    return found


def measured(
    ctx: int, include_tx: bool, window: bool, snapshot: Snapshot | None
) -> tuple[int, float, datetime | None, int]:
    """(documents, average length, where the newest begin, the largest document id): as
    now (`memory.search.statistics`; no window unless `window`), or as the first page of
    the cursor measured them."""
    if snapshot is not None:
        return snapshot.documents, snapshot.average, snapshot.since_time(), snapshot.bound
    documents, average = context_size(ctx, include_tx)
    return documents, average, recent_since(ctx, include_tx) if window else None, bound()


def fingerprint(q: str, filters: dict[str, Any]) -> str:
    """A short hash of the query and its filters: a cursor is bound to them."""
    canonical = json.dumps({"q": q, **filters}, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def issue(ctx: int, query: str, snapshot: Snapshot, offset: int) -> str:
    """The cursor of the page starting at `offset` (`query`: `fingerprint`)."""
    data = {"c": ctx, "q": query, "o": offset, "s": asdict(snapshot)}
    return signing.dumps(data, salt=SALT, compress=True)


def refused(message: str, reason: str) -> InvalidRequest:
    """400 `invalid_cursor`, with the reason in `details`."""
    return InvalidRequest(
        message, code=ErrorCode.INVALID_CURSOR, details=[{"field": "cursor", "reason": reason}]
    )


def read(cursor: Any, ctx: int, query: str) -> tuple[Snapshot, int]:
    """The snapshot and offset a cursor stands for; InvalidRequest `invalid_cursor` (reason
    `malformed`, `bad_signature`, `other_context` or `other_query`) otherwise."""
    if not isinstance(cursor, str) or not cursor:
        raise refused("cursor must be the next_cursor a previous page returned", "malformed")
    try:
        data = signing.loads(cursor, salt=SALT)
    except signing.BadSignature:
        raise refused(
            "this cursor was not issued by this server or was altered; search again without it",
            "bad_signature",
        ) from None
    if not isinstance(data, dict) or data.get("c") != ctx:
        raise refused("this cursor belongs to another context", "other_context")
    if data.get("q") != query:
        raise refused(
            "this cursor was issued for another query or other filters; send the same q and "
            "filters, or search again without a cursor",
            "other_query",
        )
    try:
        snapshot = Snapshot(**data["s"])
        offset = data["o"]
    except (KeyError, TypeError):
        raise refused("malformed cursor", "malformed") from None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise refused("malformed cursor", "malformed")
    return snapshot, offset
