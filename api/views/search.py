"""search/: lexical search over frames and events (R33)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.requests import query, query_parameters
from api.schema import READ_ERRORS, responses
from api.shapes import SearchResultSerializer
from memory.requests.frames import SearchQuery


class SearchView(ContextAPIView):
    @extend_schema(
        tags=["search"],
        operation_id="search",
        summary="Lexical search over frames and events (R33)",
        description="Ranked: a frame whose id is the query first, then by relevance (rare "
        "words, frame id, then body, then event text); a question need not match every word. "
        "Filters `type` (frame, event), `status`, `kind`, `thread`, `since`, `until`; "
        "transaction events only with `transactions=true` or `kind=transaction`. `total` "
        "counts the matches (exact while `total_exact`); `cursor` + `next_cursor` page through "
        "every match (`offset` + `next_offset`: the first 1000). Hits "
        "carry refs and a highlighted snippet; `lag` says how far the index is behind the "
        "facts.",
        parameters=query_parameters(SearchQuery),
        responses=responses({200: SearchResultSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(SearchQuery, request.query_params)
        from memory.search.query import search

        result = search(
            self.ctx,
            asked.q,
            type=asked.type,
            status=asked.status,
            kind=asked.kind,
            thread=asked.thread,
            since=asked.since,
            until=asked.until,
            transactions=asked.transactions,
            limit=asked.limit,
            offset=asked.offset,
            cursor=asked.cursor,
        )
        return Response(result)
