"""REST views for contexts, events, evaluations and actions (R37, docs/rest.md).

Thin by rule: check access (ContextAPIView), validate input (api.serializers), call one
`memory` function, shape the answer (api.shapes). Transactions, frames, relations, recall and
search are in `api.views_memory`.
"""

from __future__ import annotations

from typing import Any, cast

from django.urls import Resolver404, resolve
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response

from api import views_history
from api.base import (
    ApiView,
    ContextAPIView,
    idempotency_key,
    not_found,
)
from api.bounds import bounded_input
from api.errors import ApiError, error_response
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.serializers import (
    ActionIn,
    EvaluationIn,
    EventAppendIn,
    EventBulkAppendIn,
    EventChunkQuery,
    EventListQuery,
    body_data,
    query_data,
)
from api.shapes import (
    ApiIndexSerializer,
    BulkEventListSerializer,
    ContextListSerializer,
    ContextSerializer,
    EvaluationSerializer,
    EventChunkSerializer,
    EventListSerializer,
    EventSerializer,
)
from memory.kinds import SCREENING_OFF
from memory.limits import EVENT_PREVIEW_CHARS, MAX_BULK_EVENTS
from memory.models import ApiToken, Event
from memory.read import lists as reads
from memory.read.access import contexts_for_person
from memory.screening import noted_payload, screen
from memory.shapes import EventJson, appended_event_json, context_json, event_json
from memory.timeline.bulk import append_events
from memory.timeline.evaluation import evaluate_or_replay
from memory.timeline.events import append_event, register_action
from memory.vocabulary import MAX_SEQ, event_ref

TAG_CONTEXT = ["context"]
TAG_EVENTS = ["events"]
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="same as `idempotency_key` in the body",
)


def not_found_message(path: str) -> str:
    """Names the path, and the path with a slash when only the slash is missing (API paths
    end with one; a redirect would drop a POST body)."""
    if not path.endswith("/"):
        try:
            match = resolve(path + "/")
        except Resolver404:
            match = None
        if match is not None and match.url_name != "api-not-found":
            return f"no API endpoint at {path}; API paths end with a slash: {path}/"
    return f"no API endpoint at {path}"


class ApiIndexView(ApiView):
    permission_classes = [permissions.AllowAny]
    throttle_classes: list[Any] = []

    @extend_schema(
        tags=["index"],
        operation_id="api_index",
        summary="Where things are",
        description="Links to the schema and docs, and the contexts the caller can use.",
        responses=responses({200: ApiIndexSerializer}, 401, 429),
        auth=[],
    )
    def get(self, request: Request) -> Response:
        slugs = [context.slug for context in _visible_contexts(request)]
        return Response(
            {
                "version": "v1",
                "schema": "/api/schema/",
                "docs": "/api/docs/",
                "contexts": [f"/api/v1/contexts/{slug}/" for slug in slugs],
            }
        )


def _visible_contexts(request: Request) -> list[Any]:
    if isinstance(request.auth, ApiToken):
        return [request.auth.context]
    return contexts_for_person(request.user)


class ContextListView(ApiView):
    @extend_schema(
        tags=TAG_CONTEXT,
        operation_id="contexts_list",
        summary="Contexts the caller can use",
        description="A token sees its own context; a staff person sees every context.",
        responses=responses({200: ContextListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request) -> Response:
        return Response({"contexts": [context_json(c) for c in _visible_contexts(request)]})


class ContextDetailView(ContextAPIView):
    @extend_schema(
        tags=TAG_CONTEXT,
        operation_id="context_read",
        summary="The context: version, tick, settings, pressure",
        responses=responses({200: ContextSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(context_json(self.ctx))

    @views_history.PATCH_SCHEMA
    def patch(self, request: Request, slug: str) -> Response:
        return views_history.patch_context(self, request)


def _event_json(event: Event, created: bool | None = None) -> EventJson:
    preview = getattr(event, "preview", None)
    if preview is None:
        preview = event.content[:EVENT_PREVIEW_CHARS]
    data = event_json(event, preview)
    if created is not None:
        data["created"] = created
    return data


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
        after = self.cursor_after(query, filters, int)
        if after is None:
            after = query.get("after", 0)
        page = reads.list_events(self.ctx, after_seq=after, limit=query["limit"], **filters)
        return self.list_page(
            "events", page.items, page.has_more, lambda e: e.seq, _event_json, filters
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
            _event_json(result.event, created=result.created),
            status=201 if result.created else 200,
        )

    def _post_bulk(self, request: Request) -> Response:
        if request.headers.get("Idempotency-Key") is not None:
            raise ApiError(
                "invalid_request",
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
                "invalid_request",
                f"unknown field {unknown[0]!r} beside events",
                [{"field": name, "message": "unknown field"} for name in unknown],
            )
        items = body["events"]
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK_EVENTS:
            raise ApiError(
                "invalid_request",
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


class EvaluationView(ContextAPIView):
    @extend_schema(
        tags=["evaluations"],
        operation_id="evaluations_create",
        summary="Claim pending inputs and compile the active context",
        description="Advances the tick when the batch holds an external fact (R22). A retry "
        "with the same `idempotency_key` returns the first result (200) and changes nothing.",
        request=EvaluationIn,
        parameters=[IDEMPOTENCY_HEADER],
        responses=responses(
            {201: EvaluationSerializer, 200: EvaluationSerializer}, *WRITE_ERRORS, 409
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        data = body_data(EvaluationIn, request.data)
        result, created = evaluate_or_replay(
            self.ctx.pk,
            thread=data.get("thread"),
            idempotency_key=idempotency_key(request, data.get("idempotency_key")),
            continuation=data["continuation"],
            include_instructions=data["include_instructions"],
        )
        return Response(bounded_input(result), status=201 if created else 200)

    @views_history.LIST_SCHEMA
    def get(self, request: Request, slug: str) -> Response:
        return views_history.list_evaluations_response(self, request)


class ActionView(ContextAPIView):
    @extend_schema(
        tags=["actions"],
        operation_id="actions_register",
        summary="Register an external action before running it",
        description="Refused with 409 `maintenance_required` while the context is in "
        "maintenance (R25). The action stays open until a `tool_result` names it in "
        "`delivers`.",
        request=ActionIn,
        parameters=[IDEMPOTENCY_HEADER],
        responses=responses({201: EventSerializer, 200: EventSerializer}, *WRITE_ERRORS, 409),
    )
    def post(self, request: Request, slug: str) -> Response:
        data = body_data(ActionIn, request.data)
        fields, _notes = screen(self.ctx.screening, {"arguments": data.get("arguments")})
        result = register_action(
            self.ctx.pk,
            name=data["name"],
            arguments=fields["arguments"],
            thread=data.get("thread"),
            idempotency_key=idempotency_key(request, data.get("idempotency_key")),
        )
        return Response(
            _event_json(result.event, created=result.created),
            status=201 if result.created else 200,
        )


class ApiNotFoundView(ApiView):
    """Any other URL under /api/: the standard error shape, never an HTML page."""

    permission_classes = [permissions.AllowAny]
    throttle_classes: list[Any] = []
    schema = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        pass

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        self.args, self.kwargs = args, kwargs
        self.request = self.initialize_request(request, *args, **kwargs)
        self.headers = self.default_response_headers
        response = error_response("not_found", not_found_message(request.path), 404)
        self.response = self.finalize_response(self.request, response, *args, **kwargs)
        return self.response
