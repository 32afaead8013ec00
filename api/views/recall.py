"""recall/: graph recall from a frame or an event, now or as of a version (R27-R30, R63)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.requests import body
from api.schema import WRITE_ERRORS, responses
from api.shapes import RecallSerializer
from memory.read.at import reading
from memory.requests.frames import RecallIn
from memory.scopes import READ, WRITE


class RecallView(ContextAPIView):
    capabilities = {"POST": READ}  # a read; as an observation it writes

    def reads_only(self, request: Request) -> bool:
        """A recall reads, unless it appends its result as an observation (a write)."""
        return isinstance(request.data, dict) and request.data.get("as_observation") is not True

    @extend_schema(
        tags=["recall"],
        operation_id="recall",
        summary="Graph recall from a frame or an event (R27-R30, R63)",
        description="Breadth-first over sources and relations, nearest first, paged by "
        "`max_nodes` and a byte budget. From an event ref (`@e42`) the walk lists the frames "
        "citing the event (`descendants`, the default from an event, or `both`); `ancestors` "
        "gives the event alone. A cursor is bound to the query and the version: after a change "
        "it is refused with 409 `stale_cursor`, with other parameters with 400 "
        "`invalid_cursor`. With "
        "`view_version` (or `evaluation`) an older view is refused with 409 `stale_view`, one "
        "ahead of the context with 400 `invalid_view_version`. "
        "`as_observation` appends the result as a `recall_result` observation.",
        request=RecallIn,
        responses=responses({200: RecallSerializer}, *WRITE_ERRORS, 409),
    )
    def post(self, request: Request, slug: str) -> Response:
        asked = body(RecallIn, request.data)
        if asked.as_observation:
            self.require(WRITE, "append a recall result as an observation")
        result = reading(self.ctx, asked.as_of).recall(
            frame_id=asked.frame_id,
            depth=asked.depth,
            direction=asked.direction,
            include_bodies=asked.include_bodies,
            include_events=asked.include_events,
            max_nodes=asked.max_nodes,
            cursor=asked.cursor,
            view_version=asked.view_version,
            evaluation_id=asked.evaluation,
            as_observation=asked.as_observation,
            thread=asked.thread,
        )
        return Response(result)
