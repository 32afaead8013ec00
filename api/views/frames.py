"""frames/, frames/{id}/, its body and its revisions: list, read, revise the body (R37, R52, R63)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, not_found
from api.requests import body, query, query_parameters
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.shapes import (
    FrameDetailSerializer,
    FrameListSerializer,
    ReceiptSerializer,
    RevisionSerializer,
)
from api.views.common import list_response, listed_reading, receipt_response
from memory.limits import INLINE_CHARS
from memory.read.at import reading
from memory.read.pages import revision_detail
from memory.read.paging import FRAMES
from memory.requests.frames import FrameBodyIn, FrameDetailQuery, FrameListQuery
from memory.shapes import frame_json
from memory.shapes.pages import frame_detail_json
from memory.tx.bodyedit import revise_body
from memory.tx.lang import fields_text
from memory.vocabulary import MAX_SEQ


class FrameBodyView(ContextAPIView):
    @extend_schema(
        tags=["frames"],
        operation_id="frames_revise_body",
        summary="Revise one frame's body from the body text alone",
        description="`text` is only the new body: S-expression fields (`form` `fields`) or one "
        "JSON object (`form` `json`, a key given twice is 400). It commits one transaction "
        "revising this frame and nothing else; 400 `parse_error` names line and column.",
        parameters=[OpenApiParameter("frame_id", str, OpenApiParameter.PATH)],
        request=FrameBodyIn,
        responses=responses({201: ReceiptSerializer}, *WRITE_ERRORS, 409, 422),
    )
    def post(self, request: Request, slug: str, frame_id: str) -> Response:
        asked = body(FrameBodyIn, request.data)
        result = revise_body(
            self.ctx.pk,
            frame_id=frame_id,
            text=asked.text,
            form=asked.form,
            base_version=asked.base_version,
            reason=asked.reason,
            author=self.author(),
        )
        return receipt_response(result)


class FrameListView(ContextAPIView):
    @extend_schema(
        tags=["frames"],
        operation_id="frames_list",
        summary="Frames by id (filter `status`)",
        parameters=query_parameters(FrameListQuery),
        responses=responses({200: FrameListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(FrameListQuery, request.query_params)
        filters: dict[str, Any] = {"status": asked.status, "source": asked.source}
        at = listed_reading(self.ctx, asked.as_of, filters)
        return list_response(
            FRAMES,
            self.ctx.pk,
            filters,
            asked.cursor,
            lambda after: at.frames(
                status=asked.status, source=asked.source, after_id=after, limit=asked.limit
            ),
            lambda f: frame_json(f, at.tick),
        )


class FrameDetailView(ContextAPIView):
    @extend_schema(
        tags=["frames"],
        operation_id="frames_read",
        summary="One frame with a page of its revisions and write history",
        description="The newest `history_limit` revisions (default 20), oldest first, in "
        "`revisions` and `write_history`; `history.next_before` pages further back. A body or "
        f"transaction text longer than {INLINE_CHARS:,} characters is left out of the page "
        "(`body_omitted`, `text_truncated`): read it with `frames/{id}/revisions/{n}/` or the "
        "transaction's event in chunks.",
        parameters=[
            OpenApiParameter("frame_id", str, OpenApiParameter.PATH),
            *query_parameters(FrameDetailQuery),
        ],
        responses=responses({200: FrameDetailSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, frame_id: str) -> Response:
        asked = query(FrameDetailQuery, request.query_params)
        at = reading(self.ctx, asked.as_of)
        frame = at.frame(frame_id)
        limit = asked.history_limit
        page = at.history_page(frame, before=asked.history_before, limit=limit)
        # `body_text`: what the explorer's editor shows.
        return Response(frame_detail_json(frame, at.tick, fields_text(frame.body), page, limit))


class FrameRevisionView(FrameDetailView):
    @extend_schema(
        tags=["frames"],
        operation_id="frames_revision_read",
        summary="One revision of a frame with its whole body",
        parameters=[
            OpenApiParameter("frame_id", str, OpenApiParameter.PATH),
            OpenApiParameter("revision", int, OpenApiParameter.PATH),
        ],
        responses=responses({200: RevisionSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, frame_id: str, revision: int) -> Response:  # type: ignore[override]
        frame = reading(self.ctx, None).frame(frame_id)
        if not 1 <= revision <= MAX_SEQ:
            raise not_found(f"revision {revision} of frame {frame_id!r}")
        return Response(revision_detail(frame, revision))
