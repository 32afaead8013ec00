"""Storing a refused transaction (R6): what was sent, the error, and who sent it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.db import transaction

from memory.contexts import token_is_live
from memory.errors import ErrorCode, MorphzError, TokenNotLive
from memory.kinds import REJECTED
from memory.models import Context, Evaluation, TransactionRecord
from memory.tx import lang as txlang
from memory.tx.apply import referenced_items

if TYPE_CHECKING:
    from memory.tx.engine import Author


def record_rejection(
    context_id: int,
    tx: dict[str, Any] | None,
    raw_text: str | None,
    data: Any,
    exc: MorphzError,
    *,
    author: Author,
    thread: str | None,
    evaluation_id: int | None,
    idempotency_key: str | None = None,
    token_id: int | None = None,
) -> None:
    """Store a rejected submission (R6) in its own database transaction, with the text
    (printed canonically when it parsed) and `exc`'s code and details. Takes no context
    lock: a rejection moves no counter. A frozen context stores nothing: its refusal is not
    a rejected transaction. Raises TokenNotLive, storing nothing, when `token_id` (the agent
    token the submission came with) is revoked or its context gone: a refusal is answered
    as the token's, as a request checked against the database would have been."""
    if token_id is not None and not token_is_live(token_id, context_id):
        raise TokenNotLive()
    if exc.code == ErrorCode.CONTEXT_FROZEN:
        return
    if tx is not None:
        try:
            text = txlang.to_text(tx)
        except Exception:  # printing must never hide the original error
            text = raw_text or ""
    elif raw_text is not None:
        text = raw_text
    else:
        text = json.dumps(data, ensure_ascii=False, default=str)[:100_000]
    base = tx.get("base_version") if tx else None
    with transaction.atomic():
        if not Context.objects.filter(pk=context_id, frozen=False).exists():
            return
        TransactionRecord.objects.create(
            context_id=context_id,
            author=author.label,
            author_kind=author.kind,
            thread=(thread or (tx or {}).get("thread") or "main")[:100],
            base_version=base if isinstance(base, int) else None,
            committed_version=None,
            status=REJECTED,
            reason=((tx or {}).get("reason") or "")[:10_000],
            text=text,
            ops=tx["ops"] if tx else None,
            errors={"code": exc.code, "message": exc.message, "details": exc.details},
            frame_ids=sorted(referenced_items(tx["ops"])[0]) if tx else [],
            evaluation_id=_own_evaluation(context_id, evaluation_id),
            idempotency_key=idempotency_key,
        )


def _own_evaluation(context_id: int, evaluation_id: int | None) -> int | None:
    """The evaluation id when it names an evaluation of this context, else None: a rejection
    record never points at another context's evaluation or at one that does not exist."""
    if evaluation_id is None or isinstance(evaluation_id, bool):
        return None
    if not isinstance(evaluation_id, int) or not 0 < evaluation_id < 2**63:
        return None
    own = Evaluation.objects.filter(pk=evaluation_id, context_id=context_id).exists()
    return evaluation_id if own else None
