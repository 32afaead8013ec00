"""REST views for history (R52–R55): freezing, forks, evaluations read back, as-of reads, diff.

Thin like every view: validate, call one `memory.versions` function, shape the answer.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key, not_found
from api.bounds import bounded_input
from api.errors import ApiError
from api.fields import StrictSlugField, idempotency_field
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
    body_data,
    cursor_field,
    limit_field,
    query_data,
    thread_field,
)
from api.shapes import (
    ContextSerializer,
    EvaluationHeadSerializer,
    PageSerializer,
    present_revision,
)
from memory.contexts import set_frozen, set_screening
from memory.kinds import SCREENING_MODES
from memory.models import ApiToken, Context
from memory.read.lists import frame_view
from memory.scopes import ADMIN
from memory.shapes import context_json
from memory.versions import asof
from memory.versions.audit import evaluation_summary, get_evaluation, list_evaluations
from memory.versions.diff import diff
from memory.versions.forks import fork_context
from memory.versions.points import Point, resolve_point
from memory.vocabulary import is_frame_id

MAX_VERSION = 2**63 - 1

# -- input ---------------------------------------------------------------------------------


class ContextPatchIn(StrictSerializer):
    frozen = StrictBooleanField(
        required=False,
        help_text="true: every write is refused with 409 `context_frozen`; false: unfreeze "
        "(a frozen context is unfrozen by an admin-scope token only)",
    )
    screening = serializers.ChoiceField(
        choices=list(SCREENING_MODES),
        required=False,
        help_text="screening of written text for secrets and card numbers: off, refuse or "
        "mask (admin-scope tokens only)",
    )


class ForkIn(StrictSerializer):
    slug = StrictSlugField(
        required=False, allow_null=True, max_length=64, help_text="default: `<source>-fork-<hex>`"
    )
    at_version = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_VERSION,
        help_text="the point to fork at (end of that version); default: now",
    )
    name = StrictCharField(
        required=False,
        allow_null=True,
        max_length=200,
        help_text="default: `<source name> (fork at vN)`",
    )
    idempotency_key = idempotency_field()


class EvaluationListQuery(StrictSerializer):
    thread = thread_field(filter=True)
    cursor = cursor_field()
    limit = limit_field(50, 200)


class DiffQuery(StrictSerializer):
    to = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_VERSION,
        help_text="the later version (default: now)",
    )


# `from` is a Python keyword: declared after the class.
DiffQuery._declared_fields["from"] = StrictIntegerField(
    min_value=0, max_value=MAX_VERSION, help_text="the earlier version"
)


# -- output --------------------------------------------------------------------------------


class ForkedFromSerializer(serializers.Serializer):
    slug = serializers.CharField()
    version = serializers.IntegerField()
    tick = serializers.IntegerField()


class ForkSerializer(serializers.Serializer):
    slug = serializers.CharField(help_text="the new context")
    token = serializers.CharField(help_text="a new API token for the new context (shown once)")
    forked_from = ForkedFromSerializer()
    version = serializers.IntegerField()
    tick = serializers.IntegerField()


class EvaluationSummarySerializer(EvaluationHeadSerializer):
    last_seq = serializers.IntegerField(
        allow_null=True, help_text="the last event seq when it ran (its place in the history)"
    )
    tokens = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()


class EvaluationListSerializer(PageSerializer):
    evaluations = EvaluationSummarySerializer(many=True)


class DiffSerializer(serializers.Serializer):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    from_tick = serializers.IntegerField()
    to_tick = serializers.IntegerField()
    frames = serializers.JSONField(
        help_text="`{derived, revised (before/after bodies), retiring, retired, restored, "
        "protected, unprotected}`"
    )
    relations = serializers.JSONField(help_text="`{added, removed}`")
    events = serializers.JSONField(help_text="`{appended, retired, restored}`")
    transactions = serializers.ListField(
        child=serializers.JSONField(), help_text="committed in the range, with their reasons"
    )


class EvaluationDetailSerializer(EvaluationSummarySerializer):
    input = serializers.JSONField(
        help_text="what the model was given: `{context, text}` as compiled, with "
        "`context_omitted` and `text_omitted` (and `answer_bytes`, `limit_bytes`, "
        "`text_chars`) when they were over the response limit and left out, as on POST"
    )
    frames_seen = serializers.ListField(
        child=serializers.JSONField(), help_text="`{id, revision, status}` in input order"
    )
    observations_seen = serializers.ListField(child=serializers.CharField())


# -- as of --------------------------------------------------------------------------------


def point_of(context: Context, as_of: int | None) -> Point | None:
    """The point for an `as_of` parameter; None for the present (no parameter)."""
    if as_of is None:
        return None
    return resolve_point(context, as_of)


def frame_as_of_or_404(context: Context, point: Point, frame_id: str) -> Any:
    frame = asof.frame_as_of(context, point, frame_id) if is_frame_id(frame_id) else None
    if frame is None:
        raise not_found(f"frame {frame_id!r} as of version {point.version}")
    return frame


def frame_detail_as_of(context: Context, point: Point, frame_id: str) -> dict[str, Any]:
    frame = asof.frame_as_of(context, point, frame_id) if is_frame_id(frame_id) else None
    if frame is None:
        raise not_found(f"frame {frame_id!r} as of version {point.version}")
    data = frame_view(frame, point.tick)
    data["revisions"] = [present_revision(r) for r in asof.revisions_as_of(frame, point)]
    data["write_history"] = asof.write_history_as_of(context, frame_id, point)
    return data


# -- views ---------------------------------------------------------------------------------


def patch_context(view: ContextAPIView, request: Request) -> Response:
    """PATCH /contexts/{slug}/ (called by api.views.ContextDetailView): freeze (agent
    scope), unfreeze a frozen context or change screening (admin scope)."""
    data = body_data(ContextPatchIn, request.data)
    if not data:
        raise ApiError("invalid_request", "give frozen or screening", [{"field": "frozen"}])
    if data.get("frozen") is False and view.ctx.frozen:
        view.require(ADMIN, "unfreeze the context")
    if "screening" in data:
        view.require(ADMIN, "change the context's screening")
    context = view.ctx
    if "frozen" in data:
        context = set_frozen(view.ctx.pk, data["frozen"])
    if "screening" in data:
        context = set_screening(view.ctx.pk, data["screening"])
    return Response(context_json(context))


PATCH_SCHEMA = extend_schema(
    tags=["context"],
    operation_id="context_update",
    summary="Freeze or unfreeze the context",
    description='`{"frozen": true}`: every write (events, evaluations, transactions, '
    "actions, recall as observation) is refused with 409 `context_frozen` and writes "
    "nothing; reads, recall, search and forks still work.",
    request=ContextPatchIn,
    responses=responses({200: ContextSerializer}, *WRITE_ERRORS),
)


class ForkView(ContextAPIView):
    @extend_schema(
        tags=["context"],
        operation_id="context_fork",
        summary="Fork the context at a version",
        description="Creates an independent context whose history and state equal this one's "
        "at the end of `at_version` (default: now): events, frames with revisions, relations, "
        "transaction records, retirement windows, counters, settings and the search index. "
        "Answers its slug, a new token for it and `forked_from`. This context is untouched. "
        "Works on frozen contexts too. With `idempotency_key` (or the Idempotency-Key header) "
        "a retry whose first answer was lost gets the same fork and the same token; the key "
        "with other arguments or from another caller is 409 `idempotency_key_reused`.",
        request=ForkIn,
        responses=responses({201: ForkSerializer}, *WRITE_ERRORS, 409),
    )
    def post(self, request: Request, slug: str) -> Response:
        data = body_data(ForkIn, request.data)
        if Context.objects.filter(forked_from_id=self.ctx.pk).count() >= settings.MORPHZ_FORK_LIMIT:
            self.require(ADMIN, f"fork beyond the limit of {settings.MORPHZ_FORK_LIMIT} forks")
        key = idempotency_key(request, data.get("idempotency_key"))
        result = fork_context(
            self.ctx.pk,
            slug=data.get("slug") or None,
            at_version=data.get("at_version"),
            name=data.get("name"),
            idempotency_key=key,
            caller_secret=caller_secret(request) if key is not None else None,
        )
        return Response(result.as_dict(), status=201)


def caller_secret(request: Request) -> bytes:
    """What seals a fork's token for a retry under its idempotency key (memory.versions.
    forks): the caller's raw bearer token, which the server never stores; for a signed-in
    person, the server's secret key and their id."""
    from django.conf import settings

    header = request.META.get("HTTP_AUTHORIZATION", "")
    if isinstance(request.auth, ApiToken) and header.startswith("Bearer "):
        return header.removeprefix("Bearer ").strip().encode()
    return f"{settings.SECRET_KEY}:person:{request.user.pk}".encode()


def list_evaluations_response(view: ContextAPIView, request: Request) -> Response:
    """GET evaluations/ (called by api.views.EvaluationView)."""
    query = query_data(EvaluationListQuery, request.query_params)
    filters = {"thread": query.get("thread")}
    after = view.cursor_after(query, filters, int) or 0
    rows, has_more = list_evaluations(
        view.ctx, thread=filters["thread"], after_pk=after, limit=query["limit"]
    )
    return view.list_page(
        "evaluations", rows, has_more, lambda e: e.pk, evaluation_summary, filters
    )


LIST_SCHEMA = extend_schema(
    tags=["evaluations"],
    operation_id="evaluations_list",
    summary="Evaluations, oldest first: view version, tick, claimed refs",
    parameters=[EvaluationListQuery],
    responses=responses({200: EvaluationListSerializer}, *READ_ERRORS),
)


class EvaluationDetailView(ContextAPIView):
    @extend_schema(
        tags=["evaluations"],
        operation_id="evaluations_read",
        summary="One evaluation with the compiled input the model was given",
        parameters=[OpenApiParameter("evaluation_id", int, OpenApiParameter.PATH)],
        responses=responses({200: EvaluationDetailSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, evaluation_id: int) -> Response:
        if not 0 < evaluation_id <= MAX_VERSION:
            raise not_found(f"evaluation {evaluation_id}")
        data: dict[str, Any] = get_evaluation(self.ctx, evaluation_id)
        return Response(bounded_input(data, "input"))


class DiffView(ContextAPIView):
    @extend_schema(
        tags=["history"],
        operation_id="diff",
        summary="What changed between two versions",
        description="Frames derived, revised (both bodies), retiring, retired, restored, "
        "protected; relations added and removed; events appended, retired and restored; the "
        "committed transactions in between with their reasons. Both ends are the end of "
        "their version (see docs/history.md).",
        parameters=[
            OpenApiParameter("from", int, OpenApiParameter.QUERY, required=True),
            OpenApiParameter("to", int, OpenApiParameter.QUERY, required=False),
        ],
        responses=responses({200: DiffSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(DiffQuery, request.query_params)
        return Response(diff(self.ctx, query["from"], query.get("to")))
