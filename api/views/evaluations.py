"""evaluations/ and evaluations/{id}/: evaluate, list, read back (R22, R55)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key, not_found
from api.bounds import bounded_input
from api.requests import body, query, query_parameters
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.shapes import EvaluationDetailSerializer, EvaluationListSerializer, EvaluationSerializer
from api.views.common import IDEMPOTENCY_HEADER, MAX_VERSION, list_response
from memory.read.paging import EVALUATIONS
from memory.requests.events import EvaluationIn, EvaluationListQuery
from memory.timeline.evaluation import evaluate_or_replay
from memory.versions.audit import evaluation_summary, get_evaluation, list_evaluations

TAG_EVALUATIONS = ["evaluations"]


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
        asked = body(EvaluationIn, request.data)
        result, created = evaluate_or_replay(
            self.ctx.pk,
            thread=asked.thread,
            idempotency_key=idempotency_key(request, asked.idempotency_key),
            continuation=asked.continuation,
            include_instructions=asked.include_instructions,
        )
        return Response(bounded_input(result), status=201 if created else 200)

    @extend_schema(
        tags=TAG_EVALUATIONS,
        operation_id="evaluations_list",
        summary="Evaluations, oldest first: view version, tick, claimed refs",
        parameters=query_parameters(EvaluationListQuery),
        responses=responses({200: EvaluationListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(EvaluationListQuery, request.query_params)
        filters = {"thread": asked.thread}
        return list_response(
            EVALUATIONS,
            self.ctx.pk,
            filters,
            asked.cursor,
            lambda after: list_evaluations(
                self.ctx, thread=asked.thread, after_pk=after, limit=asked.limit
            ),
            evaluation_summary,
        )


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
