"""Keyset paging of the lists (R37): every cursor-paged list is declared here once, with its
key, its page sizes and its cursor; views and request shapes take them from here.

A cursor is opaque to clients: the last key seen plus a fingerprint of the context and the
filters, so a cursor replayed on another context or with other filters is refused (400
`invalid_cursor`) instead of silently paging another list. Recall and search page by a
`SignedCursor`: an offset into a result bound to its query (and what the first page saw).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Generic, TypeVar

from django.core import signing

from memory.errors import InvalidField, InvalidRequest
from memory.vocabulary import MAX_SEQ

T = TypeVar("T")

# The request's `cursor` and the answer's `next_cursor`, as the schema describes them.
CURSOR_HELP = "`next_cursor` of the previous page"
NEXT_CURSOR_HELP = "pass as `cursor` for the next page; null on the last page"


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: at most `limit` items, and whether more follow."""

    items: list[T]
    has_more: bool


def invalid_cursor(message: str = "cursor is malformed") -> InvalidRequest:
    """400 `invalid_cursor`, naming the field."""
    return InvalidField("cursor", message)


@dataclass(frozen=True)
class Paging:
    """How one list pages: the name its items go under, the key of an item (its order),
    the key's type and its value before the first item, the default and largest page."""

    name: str
    key: Callable[[Any], Any]
    kind: type
    start: Any
    limit: int
    max_limit: int

    def cursor(self, context_id: int, filters: dict[str, Any]) -> ListCursor:
        """The cursor of this list on one context with these filters."""
        return ListCursor(self, context_id, filters)


class ListCursor:
    """Reads a request's cursor and makes the answer's `next_cursor` (see the module)."""

    def __init__(self, paging: Paging, context_id: int, filters: dict[str, Any]) -> None:
        self.paging = paging
        canonical = json.dumps({"context": context_id, **filters}, sort_keys=True, default=str)
        self.fingerprint = hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def after(self, cursor: str | None, default: Any = None) -> Any:
        """The last key the cursor saw; without a cursor `default` (or the list's start).
        InvalidRequest `invalid_cursor` for a malformed cursor or one made for another
        context or other filters."""
        if cursor is None:
            return self.paging.start if default is None else default
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            after = data["a"]
            fingerprint = data["f"]
        except (ValueError, KeyError, TypeError, UnicodeError):
            raise invalid_cursor() from None
        if not isinstance(after, self.paging.kind) or isinstance(after, bool):
            raise invalid_cursor()
        if isinstance(after, int) and not 0 <= after <= MAX_SEQ:
            raise invalid_cursor()
        if fingerprint != self.fingerprint:
            raise invalid_cursor(
                "cursor belongs to another context or to a list with other filters; "
                "restart without a cursor"
            )
        return after

    def encode(self, after: Any) -> str:
        """The cursor standing after the key `after`."""
        raw = json.dumps({"a": after, "f": self.fingerprint}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def answer(self, page: Page[T], present: Callable[[T], Any]) -> dict[str, Any]:
        """`{<name>: [...], next_cursor}`: the cursor after the last item (null on the last
        page)."""
        items = page.items
        next_cursor = self.encode(self.paging.key(items[-1])) if page.has_more else None
        return {self.paging.name: [present(item) for item in items], "next_cursor": next_cursor}


@dataclass(frozen=True)
class CursorAt:
    """Where a signed cursor stands: the next page's offset, and what the first page fixed
    (the `extra` given to `SignedCursor.issue`)."""

    offset: int
    fixed: dict[str, Any]


@dataclass(frozen=True)
class SignedCursor:
    """A cursor into a ranked or walked result (recall, search): the offset of the next
    page, signed with the server's key under `salt`, bound to the context and to a
    fingerprint of the query, with whatever else the first page fixed (`extra`).
    `restart` ends the refusal's message: what the caller does instead."""

    salt: str
    restart: str

    @staticmethod
    def fingerprint(params: dict[str, Any]) -> str:
        """A short hash of a query's parameters: a cursor is bound to them."""
        canonical = json.dumps(params, sort_keys=True, default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()[:32]

    def issue(self, context_id: int, fingerprint: str, offset: int, **extra: Any) -> str:
        """The cursor of the page starting at `offset`."""
        data = {"c": context_id, "q": fingerprint, "o": offset, **extra}
        return signing.dumps(data, salt=self.salt, compress=True)

    def read(self, cursor: Any, context_id: int, fingerprint: str) -> CursorAt:
        """Where the cursor stands (a non-negative offset, and the extras);
        400 `invalid_cursor` with the reason (`malformed`, `bad_signature`,
        `other_context`, `other_query`) in `details` otherwise."""
        if not isinstance(cursor, str) or not cursor:
            raise self.refused(
                "cursor must be the next_cursor a previous page returned", "malformed"
            )
        try:
            data = signing.loads(cursor, salt=self.salt)
        except signing.BadSignature:
            raise self.refused(
                f"this cursor was not issued by this server or was altered; {self.restart}",
                "bad_signature",
            ) from None
        if not isinstance(data, dict) or data.get("c") != context_id:
            raise self.refused("this cursor belongs to another context", "other_context")
        if data.get("q") != fingerprint:
            raise self.refused(
                "this cursor was issued for another query or other parameters; send the same "
                f"ones, or {self.restart}",
                "other_query",
            )
        offset = data.get("o")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise self.refused("malformed cursor", "malformed")
        fixed = {k: v for k, v in data.items() if k not in ("c", "q", "o")}
        return CursorAt(offset, fixed)

    @staticmethod
    def refused(message: str, reason: str) -> InvalidRequest:
        """400 `invalid_cursor`, naming the field and the reason."""
        return InvalidField("cursor", message, reason=reason)


EVENTS = Paging("events", attrgetter("seq"), int, 0, limit=100, max_limit=500)
FRAMES = Paging("frames", attrgetter("frame_id"), str, "", limit=100, max_limit=500)
RELATIONS = Paging("relations", attrgetter("pk"), int, 0, limit=100, max_limit=500)
TRANSACTIONS = Paging("transactions", attrgetter("pk"), int, 0, limit=50, max_limit=200)
EVALUATIONS = Paging("evaluations", attrgetter("pk"), int, 0, limit=50, max_limit=200)
