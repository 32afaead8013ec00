"""events/ and events/{seq}/: append one or many, list, read in chunks (R37, R50)."""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key, not_found
from api.errors import ApiError
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.serializers import (
    EventAppendIn,
    EventBulkAppendIn,
    EventChunkQuery,
    EventListQuery,
    body_data,
    query_data,
)
from api.shapes import (
    BulkEventListSerializer,
    EventChunkSerializer,
    EventListSerializer,
    EventSerializer,
)
from api.views.common import IDEMPOTENCY_HEADER, event_answer
from memory.errors import ErrorCode
from memory.kinds import SCREENING_OFF
from memory.limits import MAX_BULK_EVENTS
from memory.read import lists as reads
from memory.read.paging import EVENTS
from memory.screening import noted_payload, screen
from memory.shapes import appended_event_json
from memory.timeline.bulk import append_events
from memory.timeline.events import append_event
from memory.vocabulary import MAX_SEQ, event_ref

TAG_EVENTS = ["events"]


class EventListView(ContextAPIView):
    @extend_schema(
        tags=TAG_EVENTS,
        operation_id="events_list",
        summary="List events, newest last, cursor-paged",
        parameters=[EventListQuery],
        responses=responses({200: EventListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(EventListQuery, request.query_params)
        filters = {k: query.get(k) for k in ("kind", "thread", "status")}
        cursor = EVENTS.cursor(self.ctx.pk, filters)
        after = cursor.after(query.get("cursor"), query.get("after"))
        page = reads.list_events(self.ctx, after_seq=after, limit=query["limit"], **filters)
        return Response(cursor.answer(page, event_answer))

    @extend_schema(
        tags=TAG_EVENTS,
        operation_id="events_append",
        summary="Append an event, or several at once",
        description="Kinds `user_message`, `tool_result`, `agent_message`, `external_fact`. "
        "A retry with the same `idempotency_key` returns the first event (200) and writes "
        "nothing; the first append answers 201.\n\n"
        'Bulk (R50): `{"events": [...]}` with 1-1000 items, each as a single append. '
        "They commit atomically and in order: one bad item answers its error (naming the "
        "item's `index`) and writes nothing. Idempotency holds per item. The answer is "
        '`{"events": [...]}` in the order sent, each with `ref`, `seq` and `created`; 201 '
        "when something was written, 200 when every item was a retry. An item may deliver a "
        "request appended earlier in the same batch. The Idempotency-Key header is refused "
        "on bulk (keys go on the items).",
        request=PolymorphicProxySerializer(
            component_name="EventAppendRequest",
            serializers=[EventAppendIn, EventBulkAppendIn],
            resource_type_field_name=None,
        ),
        parameters=[IDEMPOTENCY_HEADER],
        responses=responses(
            {
                201: PolymorphicProxySerializer(
                    component_name="EventAppendResponse",
                    serializers=[EventSerializer, BulkEventListSerializer],
                    resource_type_field_name=None,
                ),
                200: PolymorphicProxySerializer(
                    component_name="EventAppendRetryResponse",
                    serializers=[EventSerializer, BulkEventListSerializer],
                    resource_type_field_name=None,
                ),
            },
            *WRITE_ERRORS,
            409,
            422,
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        if isinstance(request.data, dict) and "events" in request.data:
            return self._post_bulk(request)
        data = body_data(EventAppendIn, request.data)
        fields, notes = screen(
            self.ctx.screening, {"content": data["content"], "payload": data.get("payload")}
        )
        result = append_event(
            self.ctx.pk,
            kind=data["kind"],
            content=fields["content"],
            payload=noted_payload(fields["payload"], notes),
            thread=data.get("thread"),
            delivers=data.get("delivers") or [],
            idempotency_key=idempotency_key(request, data.get("idempotency_key")),
        )
        return Response(
            event_answer(result.event, created=result.created),
            status=201 if result.created else 200,
        )

    def _post_bulk(self, request: Request) -> Response:
        if request.headers.get("Idempotency-Key") is not None:
            raise ApiError(
                ErrorCode.INVALID_REQUEST,
                "a bulk append takes idempotency keys on its items, not in the "
                "Idempotency-Key header",
                [{"field": "Idempotency-Key"}],
            )
        # Only the envelope here: append_events checks each item (a serializer per item
        # cost more than the append itself, ~0.5 ms an item).
        body = cast(dict[str, Any], request.data)  # post() checked it is an object
        unknown = sorted(set(body) - {"events"})
        if unknown:
            raise ApiError(
                ErrorCode.INVALID_REQUEST,
                f"unknown field {unknown[0]!r} beside events",
                [{"field": name, "message": "unknown field"} for name in unknown],
            )
        items = body["events"]
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK_EVENTS:
            raise ApiError(
                ErrorCode.INVALID_REQUEST,
                f"events must be a list of 1-{MAX_BULK_EVENTS} events",
                [{"field": "events"}],
            )
        if self.ctx.screening != SCREENING_OFF:
            items = [_screened_item(self.ctx.screening, i, item) for i, item in enumerate(items)]
        results = append_events(self.ctx.pk, items)
        created = any(result.created for result in results)
        return Response(
            {"events": [appended_event_json(r.event, r.created) for r in results]},
            status=201 if created else 200,
        )


def _screened_item(mode: str, index: int, item: Any) -> Any:
    """One bulk item screened (`memory.screening`); fields named `events[i].content`."""
    if not isinstance(item, dict):
        return item  # append_events names what is wrong with it
    where = f"events[{index}]"
    fields, notes = screen(
        mode, {f"{where}.content": item.get("content"), f"{where}.payload": item.get("payload")}
    )
    out = {**item, "content": fields[f"{where}.content"]}
    if notes or "payload" in item:
        out["payload"] = noted_payload(fields[f"{where}.payload"], notes)
    return out


class EventDetailView(ContextAPIView):
    @extend_schema(
        tags=TAG_EVENTS,
        operation_id="events_read",
        summary="Read one event's text in chunks, with its size and status",
        description="Any event, retired or not (R31). `offset` and `length` count characters; "
        "`next_offset` is null at the end.",
        parameters=[EventChunkQuery],
        responses=responses({200: EventChunkSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, seq: int) -> Response:
        query = query_data(EventChunkQuery, request.query_params)
        if not 1 <= seq <= MAX_SEQ:
            raise not_found(f"event {event_ref(seq)}")
        from memory.read.history import read_event_chunk

        return Response(read_event_chunk(self.ctx, seq, query["offset"], query["length"]))
