"""relations/: live relations, with the removed ones on request, now or as of a version."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.requests import query, query_parameters
from api.schema import READ_ERRORS, responses
from api.shapes import RelationListSerializer
from api.views.common import list_response, listed_reading
from memory.read.paging import RELATIONS
from memory.requests.frames import RelationListQuery
from memory.shapes import relation_json


class RelationListView(ContextAPIView):
    @extend_schema(
        tags=["relations"],
        operation_id="relations_list",
        summary="Relations (filters `subject`, `object`, `name`)",
        description="Live relations; `include_removed=true` adds the unrelated ones (history).",
        parameters=query_parameters(RelationListQuery),
        responses=responses({200: RelationListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(RelationListQuery, request.query_params)
        filters = asked.model_dump(include={"subject", "object", "name", "include_removed"})
        at = listed_reading(self.ctx, asked.as_of, filters)
        return list_response(
            RELATIONS,
            self.ctx.pk,
            filters,
            asked.cursor,
            lambda after: at.relations(
                subject=asked.subject,
                object_id=asked.object,
                name=asked.name,
                include_removed=asked.include_removed,
                after_pk=after,
                limit=asked.limit,
            ),
            relation_json,
        )
