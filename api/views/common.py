"""What several resource views share: the idempotency header, the event and receipt answers,
a cursor-paged list's answer, and the contexts a caller sees."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from memory.limits import EVENT_PREVIEW_CHARS
from memory.models import ApiToken, Context, Event
from memory.read.access import contexts_for_person
from memory.read.at import Present, reading
from memory.read.paging import Page, Paging
from memory.shapes import EventJson, event_json, served_receipt
from memory.tx.engine import CommitResult

MAX_VERSION = 2**63 - 1
T = TypeVar("T")

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="same as `idempotency_key` in the body",
)


def list_response(
    paging: Paging,
    context_id: int,
    filters: dict[str, Any],
    cursor: str | None,
    read: Callable[[Any], Page[T]],
    present: Callable[[T], Any],
    start: Any = None,
) -> Response:
    """One page of a list: `read(after)` from the request's `cursor` (without one, `start`
    or the list's start), each item presented, with a `next_cursor` bound to the context
    and the filters (a cursor made for others is 400 `invalid_cursor`)."""
    listing = paging.cursor(context_id, filters)
    return Response(listing.answer(read(listing.after(cursor, start)), present))


def listed_reading(context: Context, as_of: int | None, filters: dict[str, Any]) -> Present:
    """The reading of a list at `as_of` (the present when None), the version it reads added
    to the list's `filters` so a cursor pages at one version."""
    at = reading(context, as_of)
    if at.as_of is not None:
        filters["as_of"] = at.as_of
    return at


def visible_contexts(request: Request) -> list[Any]:
    """The contexts the caller may use: a token's own, or a person's."""
    if isinstance(request.auth, ApiToken):
        return [request.auth.context]
    return contexts_for_person(request.user)


def event_answer(event: Event, created: bool | None = None) -> EventJson:
    """An event as answered by the event and action writes and lists."""
    preview = getattr(event, "preview", None)
    if preview is None:
        preview = event.content[:EVENT_PREVIEW_CHARS]
    data = event_json(event, preview)
    if created is not None:
        data["created"] = created
    return data


def receipt_response(result: CommitResult) -> Response:
    """A committed transaction's receipt: 201, or 200 for a replay."""
    receipt = served_receipt(result.receipt, result.record_id, result.event_ref)
    return Response(receipt, status=200 if result.replayed else 201)
