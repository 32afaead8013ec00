"""evaluations/ and evaluations/{id}/: evaluate, list, read back (R22, R55)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key, not_found
from api.bounds import bounded_input
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.serializers import (
    EvaluationIn,
    StrictSerializer,
    body_data,
    cursor_field,
    limit_field,
    query_data,
    thread_field,
)
from api.shapes import EvaluationDetailSerializer, EvaluationListSerializer, EvaluationSerializer
from api.views.common import IDEMPOTENCY_HEADER, MAX_VERSION
from memory.read.paging import EVALUATIONS
from memory.timeline.evaluation import evaluate_or_replay
from memory.versions.audit import evaluation_summary, get_evaluation, list_evaluations

TAG_EVALUATIONS = ["evaluations"]


class EvaluationListQuery(StrictSerializer):
    thread = thread_field(filter=True)
    cursor = cursor_field()
    limit = limit_field(EVALUATIONS.limit, EVALUATIONS.max_limit)


class EvaluationView(ContextAPIView):
    @extend_schema(
        tags=TAG_EVALUATIONS,
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

    @extend_schema(
        tags=TAG_EVALUATIONS,
        operation_id="evaluations_list",
        summary="Evaluations, oldest first: view version, tick, claimed refs",
        parameters=[EvaluationListQuery],
        responses=responses({200: EvaluationListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(EvaluationListQuery, request.query_params)
        filters = {"thread": query.get("thread")}
        cursor = EVALUATIONS.cursor(self.ctx.pk, filters)
        after = cursor.after(query.get("cursor"))
        page = list_evaluations(
            self.ctx, thread=filters["thread"], after_pk=after, limit=query["limit"]
        )
        return Response(cursor.answer(page, evaluation_summary))


class EvaluationDetailView(ContextAPIView):
    @extend_schema(
        tags=TAG_EVALUATIONS,
        operation_id="evaluations_read",
        summary="One evaluation with the compiled input the model was given",
        parameters=[OpenApiParameter("evaluation_id", int, OpenApiParameter.PATH)],
        responses=responses({200: EvaluationDetailSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, evaluation_id: int) -> Response:
        if not 0 < evaluation_id <= MAX_VERSION:
            raise not_found(f"evaluation {evaluation_id}")
        return Response(bounded_input(get_evaluation(self.ctx, evaluation_id), "input"))
