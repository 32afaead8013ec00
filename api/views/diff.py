"""diff/: what changed between two versions (R52)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.schema import READ_ERRORS, responses
from api.serializers import StrictIntegerField, StrictSerializer, query_data
from api.shapes import DiffSerializer
from api.views.common import MAX_VERSION
from memory.versions.diff import diff


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
