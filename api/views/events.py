"""events/ and events/{seq}/: append one or many, list, read in chunks (R37, R50)."""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key, not_found
from api.errors import ApiError
from api.requests import body, query, query_parameters
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.shapes import (
    BulkEventListSerializer,
    EventChunkSerializer,
    EventListSerializer,
    EventSerializer,
)
from api.views.common import IDEMPOTENCY_HEADER, event_answer, list_response
from memory.errors import ErrorCode
from memory.kinds import SCREENING_OFF
from memory.read import lists as reads
from memory.read.paging import EVENTS
from memory.requests.events import (
    EventAppendIn,
    EventBulkAppendIn,
    EventChunkQuery,
    EventListQuery,
    read_bulk,
)
from memory.screening import noted_payload, screen
from memory.shapes import appended_event_json
from memory.timeline.bulk import append_events
from memory.timeline.events import append
from memory.vocabulary import MAX_SEQ, event_ref

TAG_EVENTS = ["events"]


class EventListView(ContextAPIView):
    @extend_schema(
        tags=TAG_EVENTS,
        operation_id="events_list",
        summary="List events, newest last, cursor-paged",
        parameters=query_parameters(EventListQuery),
        responses=responses({200: EventListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(EventListQuery, request.query_params)
        filters = {"kind": asked.kind, "thread": asked.thread, "status": asked.status}
        return list_response(
            EVENTS,
            self.ctx.pk,
            filters,
            asked.cursor,
            lambda after: reads.list_events(
                self.ctx, after_seq=after, limit=asked.limit, **filters
            ),
            event_answer,
            start=asked.after,
        )

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
            # Request models stand where serializers go (api.requests.RequestModelExtension).
            serializers=[EventAppendIn, EventBulkAppendIn],  # type: ignore[list-item]
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
        event = body(EventAppendIn, request.data)
        key = idempotency_key(request, event.idempotency_key)
        event = _screened(self.ctx.screening, event, "").model_copy(update={"idempotency_key": key})
        result = append(self.ctx.pk, event)
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
        items = read_bulk(cast(dict[str, Any], request.data))  # post() checked it is one
        if self.ctx.screening != SCREENING_OFF:
            items = [
                _screened(self.ctx.screening, item, f"events[{i}].") for i, item in enumerate(items)
            ]
        results = append_events(self.ctx.pk, items)
        created = any(result.created for result in results)
        return Response(
            {"events": [appended_event_json(r.event, r.created) for r in results]},
            status=201 if created else 200,
        )


def _screened(mode: str, event: EventAppendIn, where: str) -> EventAppendIn:
    """`event` screened (`memory.screening`); its fields named `<where>content`."""
    fields, notes = screen(
        mode, {f"{where}content": event.content, f"{where}payload": event.payload}
    )
    payload = noted_payload(fields[f"{where}payload"], notes)
    return event.model_copy(update={"content": fields[f"{where}content"], "payload": payload})


class EventDetailView(ContextAPIView):
    @extend_schema(
        tags=TAG_EVENTS,
        operation_id="events_read",
        summary="Read one event's text in chunks, with its size and status",
        description="Any event, retired or not (R31). `offset` and `length` count characters; "
        "`next_offset` is null at the end.",
        parameters=query_parameters(EventChunkQuery),
        responses=responses({200: EventChunkSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, seq: int) -> Response:
        chunk = query(EventChunkQuery, request.query_params)
        if not 1 <= seq <= MAX_SEQ:
            raise not_found(f"event {event_ref(seq)}")
        from memory.read.history import read_event_chunk

        return Response(read_event_chunk(self.ctx, seq, chunk.offset, chunk.length))
