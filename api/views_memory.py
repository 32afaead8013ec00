"""REST views for transactions, frames, relations, recall and search (R37, docs/rest.md)."""
# long: one view per memory endpoint, each short; splitting them would scatter the routes

from __future__ import annotations

from functools import partial
from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import (
    MAX_SEQ,
    ContextAPIView,
    idempotency_key,
    not_found,
    token_id_of,
)
from api.errors import ApiError
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.serializers import (
    FrameBodyIn,
    FrameDetailQuery,
    FrameListQuery,
    RecallIn,
    RelationListQuery,
    SearchQuery,
    TransactionIn,
    TransactionListQuery,
    body_data,
    query_data,
)
from api.shapes import (
    FrameDetailSerializer,
    FrameListSerializer,
    RecallSerializer,
    ReceiptSerializer,
    RelationListSerializer,
    RevisionSerializer,
    SearchResultSerializer,
    TransactionListSerializer,
)
from api.views import IDEMPOTENCY_HEADER
from api.views_history import frame_as_of_or_404, point_of
from memory.read import lists as reads
from memory.read.lists import frame_view
from memory.read.pages import frame_history_page, revision_detail
from memory.scopes import READ, WRITE
from memory.screening import screen_transaction_json, screen_transaction_text
from memory.shapes import relation_json, transaction_json
from memory.tx.bodyedit import revise_body
from memory.tx.engine import CommitResult, submit_transaction
from memory.tx.lang import fields_text
from memory.versions import asof
from memory.vocabulary import is_frame_id

TX_JSON_KEYS = ("base_version", "reason", "ops", "thread")

TEXT_EXAMPLE = OpenApiExample(
    "text form",
    value={
        "text": '(context-tx\n  (base-version 12)\n  (reason "tests absorbed")\n'
        "  (derive test-result (from @e42) (tests passed))\n"
        "  (relate test-result supports release)\n  (retire @e42))"
    },
    request_only=True,
)
JSON_EXAMPLE = OpenApiExample(
    "JSON form",
    value={
        "base_version": 12,
        "reason": "tests absorbed",
        "ops": [
            {"op": "derive", "id": "test-result", "from": ["@e42"], "body": {"tests": "passed"}},
            {"op": "relate", "subject": "test-result", "name": "supports", "object": "release"},
            {"op": "retire", "refs": ["@e42"]},
        ],
    },
    request_only=True,
)


class TransactionView(ContextAPIView):
    # A POST's commit checks the agent token in its own database transaction
    # (`submit_transaction`'s `token_id`), so authentication may take it from memory
    # (api.auth): the POST uses the context's id only.
    commit_checks_token = ("POST",)

    @extend_schema(
        tags=["transactions"],
        operation_id="transactions_submit",
        summary="Submit a context transaction (text or JSON form)",
        description="Send `text` (the S-expression) or the JSON form (`base_version`, "
        "`reason`, `ops`), optionally `thread` and `evaluation`. The whole transaction commits "
        "or nothing does: 400 `parse_error` names line and column, 422 lists each failing "
        "operation's `index`, 409 `conflict` names each item changed since `base_version`. "
        "With `idempotency_key` (or the Idempotency-Key header) a retry of a committed "
        "transaction returns its first receipt (200) and writes nothing; the same key with "
        "another request is 409 `idempotency_key_reused`.",
        request=TransactionIn,
        parameters=[IDEMPOTENCY_HEADER],
        examples=[TEXT_EXAMPLE, JSON_EXAMPLE],
        responses=responses(
            {201: ReceiptSerializer, 200: ReceiptSerializer}, *WRITE_ERRORS, 409, 422
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        data = body_data(TransactionIn, request.data)
        evaluation_id = data.get("evaluation")
        key = idempotency_key(request, data.get("idempotency_key"))
        if "text" in data:
            extra = sorted(k for k in ("base_version", "reason", "ops") if k in request.data)
            if extra:
                raise ApiError(
                    "invalid_request",
                    "send either `text` or the JSON form (`base_version`, `reason`, `ops`), "
                    "not both",
                    [{"field": name} for name in extra],
                )
            result = submit_transaction(
                self.ctx.pk,
                text=screen_transaction_text(self.ctx.screening, data["text"]),
                author=self.author(),
                thread=data.get("thread"),
                evaluation_id=evaluation_id,
                idempotency_key=key,
                token_id=token_id_of(request),
            )
        else:
            if "ops" not in data:
                raise ApiError(
                    "invalid_request",
                    "send `text` (the S-expression) or `ops` (the JSON form)",
                    [{"field": "ops"}],
                )
            # The raw values: the transaction language validates its own form.
            raw: dict[str, Any] = dict(request.data)  # an object: checked by TransactionIn
            tx = {key: raw[key] for key in TX_JSON_KEYS if key in raw}
            tx = screen_transaction_json(self.ctx.screening, tx)
            result = submit_transaction(
                self.ctx.pk,
                data=tx,
                author=self.author(),
                thread=data.get("thread"),
                evaluation_id=evaluation_id,
                idempotency_key=key,
                token_id=token_id_of(request),
            )
        return receipt_response(result)

    @extend_schema(
        tags=["transactions"],
        operation_id="transactions_list",
        summary="Transaction history, oldest first (filter `frame`, `status`)",
        description="Committed and rejected transactions with their text, base and committed "
        "version, author, and the receipt or errors.",
        parameters=[TransactionListQuery],
        responses=responses({200: TransactionListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(TransactionListQuery, request.query_params)
        filters = {k: query.get(k) for k in ("frame", "status")}
        after = self.cursor_after(query, filters, int) or query.get("after") or 0
        page = reads.list_transactions(self.ctx, after_pk=after, limit=query["limit"], **filters)
        return self.list_page(
            "transactions", page.items, page.has_more, lambda r: r.pk, transaction_json, filters
        )


def receipt_response(result: CommitResult) -> Response:
    receipt: dict[str, Any] = dict(result.receipt)
    # From the commit result itself: `result.record` would re-read the row (a query).
    receipt["transaction"] = result.record_id
    receipt["ref"] = result.event_ref
    return Response(receipt, status=200 if result.replayed else 201)


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
        data = body_data(FrameBodyIn, request.data)
        result = revise_body(
            self.ctx.pk,
            frame_id=frame_id,
            text=data["text"],
            form=data["form"],
            base_version=data.get("base_version"),
            reason=data.get("reason"),
            author=self.author(),
        )
        return receipt_response(result)


class FrameListView(ContextAPIView):
    @extend_schema(
        tags=["frames"],
        operation_id="frames_list",
        summary="Frames by id (filter `status`)",
        parameters=[FrameListQuery],
        responses=responses({200: FrameListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(FrameListQuery, request.query_params)
        filters = {"status": query.get("status"), "source": query.get("source")}
        point = point_of(self.ctx, query.get("as_of"))
        if point is not None:
            filters["as_of"] = point.version
        after = self.cursor_after(query, filters, str) or ""
        if point is None or filters["source"]:
            if point is not None:
                raise ApiError(
                    "conflicting_filters",
                    "source lists the frames citing it now; it cannot be combined with as_of",
                    [{"field": "source"}, {"field": "as_of"}],
                )
            page = reads.list_frames(
                self.ctx,
                after_id=after,
                limit=query["limit"],
                status=filters["status"],
                source=filters["source"],
            )
            tick = self.ctx.tick
        else:
            page = asof.frames_as_of(
                self.ctx, point, after_id=after, limit=query["limit"], status=filters["status"]
            )
            tick = point.tick
        return self.list_page(
            "frames",
            page.items,
            page.has_more,
            lambda f: f.frame_id,
            lambda f: frame_view(f, tick),
            filters,
        )


class FrameDetailView(ContextAPIView):
    @extend_schema(
        tags=["frames"],
        operation_id="frames_read",
        summary="One frame with a page of its revisions and write history",
        description="The newest `history_limit` revisions (default 20), oldest first, in "
        "`revisions` and `write_history`; `history.next_before` pages further back. A body or "
        "transaction text longer than 16,384 characters is left out of the page "
        "(`body_omitted`, `text_truncated`): read it with `frames/{id}/revisions/{n}/` or the "
        "transaction's event in chunks.",
        parameters=[OpenApiParameter("frame_id", str, OpenApiParameter.PATH), FrameDetailQuery],
        responses=responses({200: FrameDetailSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str, frame_id: str) -> Response:
        query = query_data(FrameDetailQuery, request.query_params)
        point = point_of(self.ctx, query.get("as_of"))
        frame = (
            self._frame(frame_id)
            if point is None
            else frame_as_of_or_404(self.ctx, point, frame_id)
        )
        data = frame_view(frame, self.ctx.tick if point is None else point.tick)
        data["body_text"] = fields_text(frame.body)  # what the explorer's editor shows
        page = frame_history_page(
            frame, before=query.get("history_before"), limit=query["history_limit"]
        )
        if point is not None:  # the revision the frame had then is its last
            page["revisions"] = [r for r in page["revisions"] if r["version"] <= point.version]
            page["write_history"] = [
                h for h in page["write_history"] if h["version"] <= point.version
            ]
        data["revisions"] = page["revisions"]
        data["write_history"] = page["write_history"]
        data["history"] = {"next_before": page["next_before"], "limit": query["history_limit"]}
        return Response(data)

    def _frame(self, frame_id: str) -> Any:
        frame = reads.get_frame(self.ctx, frame_id) if is_frame_id(frame_id) else None
        if frame is None:
            raise not_found(f"frame {frame_id!r}")
        return frame


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
        frame = self._frame(frame_id)
        if not 1 <= revision <= MAX_SEQ:
            raise not_found(f"revision {revision} of frame {frame_id!r}")
        return Response(revision_detail(frame, revision))


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
        point = point_of(self.ctx, query.get("as_of"))
        if point is not None:
            filters["as_of"] = point.version
        after = self.cursor_after(query, filters, int) or 0
        page = (
            reads.list_relations if point is None else partial(asof.relations_as_of, point=point)
        )(
            self.ctx,
            subject=filters["subject"],
            object_id=filters["object"],
            name=filters["name"],
            include_removed=bool(filters["include_removed"]),
            after_pk=after,
            limit=query["limit"],
        )
        return self.list_page(
            "relations", page.items, page.has_more, lambda r: r.pk, relation_json, filters
        )


class RecallView(ContextAPIView):
    capabilities = {"POST": READ}  # a read; as an observation it writes

    def reads_only(self, request: Request) -> bool:
        """A recall reads, unless it appends its result as an observation (a write)."""
        return isinstance(request.data, dict) and request.data.get("as_observation") is not True

    @extend_schema(
        tags=["recall"],
        operation_id="recall",
        summary="Graph recall from a frame (R27-R30)",
        description="Breadth-first over sources and relations, nearest first, paged by "
        "`max_nodes` and a byte budget. A cursor is bound to the query and the version: after "
        "a change or with other parameters it is refused with 409 `stale_cursor`. With "
        "`view_version` (or `evaluation`) a changed view is refused with 409 `stale_view`. "
        "`as_observation` appends the result as a `recall_result` observation.",
        request=RecallIn,
        responses=responses({200: RecallSerializer}, *WRITE_ERRORS, 409),
    )
    def post(self, request: Request, slug: str) -> Response:
        data = body_data(RecallIn, request.data)
        if data["as_observation"]:
            self.require(WRITE, "append a recall result as an observation")
        from memory.recall.graph import recall

        point = point_of(self.ctx, data.get("as_of"))
        run = recall if point is None else partial(asof.recall_as_of, point=point)
        result = run(
            self.ctx,
            frame_id=data["frame_id"],
            depth=data["depth"],
            direction=data["direction"],
            include_bodies=data["include_bodies"],
            include_events=data["include_events"],
            max_nodes=data["max_nodes"],
            cursor=data.get("cursor") or None,
            view_version=data.get("view_version"),
            evaluation_id=data.get("evaluation"),
            as_observation=data["as_observation"],
            thread=data.get("thread"),
        )
        return Response(result)


class SearchView(ContextAPIView):
    @extend_schema(
        tags=["search"],
        operation_id="search",
        summary="Lexical search over frames and events (R33)",
        description="Ranked: a frame whose id is the query first, then by relevance (rare "
        "words, frame id, then body, then event text); a question need not match every word. "
        "Filters `type` (frame, event), `status`, `kind`, `thread`, `since`, `until`; "
        "transaction events only with `transactions=true` or `kind=transaction`. `total` "
        "counts the matches (exact while `total_exact`), `offset` + `next_offset` page. Hits "
        "carry refs and a highlighted snippet; `lag` says how far the index is behind the "
        "facts.",
        parameters=[SearchQuery],
        responses=responses({200: SearchResultSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = query_data(SearchQuery, request.query_params)
        from memory.search.query import search

        result = search(
            self.ctx,
            query["q"],
            type=query.get("type"),
            status=query.get("status"),
            kind=query.get("kind"),
            thread=query.get("thread"),
            since=query.get("since"),
            until=query.get("until"),
            transactions=query.get("transactions"),
            limit=query["limit"],
            offset=query["offset"],
        )
        return Response(result)
