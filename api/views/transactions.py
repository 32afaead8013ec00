"""transactions/: submit a context transaction (text or JSON form), list them (R37)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key, token_id_of
from api.errors import ApiError
from api.requests import body, query, query_parameters
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.shapes import ReceiptSerializer, TransactionListSerializer
from api.views.common import IDEMPOTENCY_HEADER, list_response, receipt_response
from memory.errors import ErrorCode
from memory.read import lists as reads
from memory.read.paging import TRANSACTIONS
from memory.requests.frames import TransactionIn, TransactionListQuery
from memory.screening import screen_transaction_json, screen_transaction_text
from memory.shapes import transaction_json
from memory.tx.engine import submit_transaction

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
        asked = body(TransactionIn, request.data)
        evaluation_id = asked.evaluation
        key = idempotency_key(request, asked.idempotency_key)
        if asked.text is not None:
            extra = sorted(k for k in ("base_version", "reason", "ops") if k in request.data)
            if extra:
                raise ApiError(
                    ErrorCode.INVALID_REQUEST,
                    "send either `text` or the JSON form (`base_version`, `reason`, `ops`), "
                    "not both",
                    [{"field": name} for name in extra],
                )
            result = submit_transaction(
                self.ctx.pk,
                text=screen_transaction_text(self.ctx.screening, asked.text),
                author=self.author(),
                thread=asked.thread,
                evaluation_id=evaluation_id,
                idempotency_key=key,
                token_id=token_id_of(request),
            )
        else:
            if asked.ops is None:
                raise ApiError(
                    ErrorCode.INVALID_REQUEST,
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
                thread=asked.thread,
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
        parameters=query_parameters(TransactionListQuery),
        responses=responses({200: TransactionListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        asked = query(TransactionListQuery, request.query_params)
        filters = {"frame": asked.frame, "status": asked.status}
        return list_response(
            TRANSACTIONS,
            self.ctx.pk,
            filters,
            asked.cursor,
            lambda after: reads.list_transactions(
                self.ctx, after_pk=after, limit=asked.limit, **filters
            ),
            transaction_json,
            start=asked.after,
        )
