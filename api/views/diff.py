"""diff/: what changed between two versions (R52)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.requests import query, query_parameters
from api.schema import READ_ERRORS, responses
from api.shapes import DiffSerializer
from memory.requests.contexts import DiffQuery
from memory.versions.diff import diff


class DiffView(ContextAPIView):
    @extend_schema(
        tags=["history"],
        operation_id="diff",
        summary="What changed between two versions",
        description="Frames derived, revised (both bodies), retiring, retired, restored, "
        "protected; relations added and removed; events appended, retired and restored; the "
        "committed transactions in between with their reasons. Both ends are the end of "
        "their version (see docs/history.md).",
        parameters=query_parameters(DiffQuery),
        responses=responses({200: DiffSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(DiffQuery, request.query_params)
        return Response(diff(self.ctx, asked.from_version, asked.to))
