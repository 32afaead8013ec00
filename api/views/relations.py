"""relations/: live relations, with the removed ones on request, now or as of a version."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.schema import READ_ERRORS, responses
from api.serializers import RelationListQuery, query_data
from api.shapes import RelationListSerializer
from memory.read.at import reading
from memory.read.paging import RELATIONS
from memory.shapes import relation_json


class RelationListView(ContextAPIView):
    @extend_schema(
        tags=["relations"],
        operation_id="relations_list",
        summary="Relations (filters `subject`, `object`, `name`)",
        description="Live relations; `include_removed=true` adds the unrelated ones (history).",
        parameters=[RelationListQuery],
        responses=responses({200: RelationListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(RelationListQuery, request.query_params)
        filters = {k: query.get(k) for k in ("subject", "object", "name", "include_removed")}
        at = reading(self.ctx, query.get("as_of"))
        if at.as_of is not None:
            filters["as_of"] = at.as_of
        cursor = RELATIONS.cursor(self.ctx.pk, filters)
        after = cursor.after(query.get("cursor"))
        page = at.relations(
            subject=filters["subject"],
            object_id=filters["object"],
            name=filters["name"],
            include_removed=bool(filters["include_removed"]),
            after_pk=after,
            limit=query["limit"],
        )
        return Response(cursor.answer(page, relation_json))
