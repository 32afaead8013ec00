"""Cancelling a pending action (R59): by the model (the `cancel_action` tool) or by a person
(the explorer, `POST actions/{ref}/cancel/`).

An action is pending until an event delivers it; a cancellation is that event: a
`tool_result` saying who cancelled it and why, delivering the action. It enters the model
input like any result, so the model learns the action will not run.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from memory.errors import ErrorCode, InvalidRequest, RuleViolation
from memory.kinds import ACTION, REQUEST_OPEN, TOOL_RESULT
from memory.limits import MAX_CANCEL_REASON_CHARS
from memory.locking import lock_context
from memory.models import Event
from memory.timeline.events import append_event, parse_event_ref


def _checked_ref(ref: Any, reason: Any, extra: list[str] | None) -> int:
    """The event sequence number `ref` names; InvalidRequest for the arguments
    `cancel_action` refuses, before anything is locked."""
    if extra:
        raise InvalidRequest(
            f"cancel_action takes ref and reason, not {', '.join(extra)}",
            code=ErrorCode.INVALID_ARGUMENTS,
        )
    if reason is not None and (
        not isinstance(reason, str) or len(reason) > MAX_CANCEL_REASON_CHARS
    ):
        raise InvalidRequest(
            f"reason must be text of at most {MAX_CANCEL_REASON_CHARS} characters",
            code=ErrorCode.INVALID_ARGUMENTS,
        )
    if not isinstance(ref, str):
        raise InvalidRequest(
            'cancel_action needs `ref`, an action ref like "@e31"', code=ErrorCode.INVALID_REF
        )
    return parse_event_ref(ref)


def cancel_action(
    context_id: int,
    ref: Any,
    *,
    reason: Any = None,
    by: str,
    thread: str | None = None,
    extra: list[str] | None = None,
    idempotency_key: str | None = None,
) -> Event:
    """Cancel the pending action `ref` (e.g. "@e31"): append a `tool_result` delivering it,
    content "cancelled by {by}: {reason}", payload `{cancelled: true, by, reason}`. Takes
    the context row lock (the check and the append in one database transaction, so a result
    arriving meanwhile makes this an `action_not_pending` refusal, never a second delivery).

    InvalidRequest `invalid_ref` (not a ref), `invalid_arguments` (an argument other than
    ref and reason, a reason that is not text of at most 1,000 characters); RuleViolation
    `unknown_ref` (no such event), `not_an_action`, `action_not_pending` (already delivered
    or cancelled). A retry under `idempotency_key` returns the first cancellation."""
    seq = _checked_ref(ref, reason, extra)
    with transaction.atomic():
        lock_context(context_id)
        if idempotency_key is not None:
            earlier = Event.objects.filter(
                context_id=context_id, idempotency_key=idempotency_key
            ).first()
            if earlier is not None:
                return earlier
        action = Event.objects.filter(context_id=context_id, seq=seq).first()
        if action is None:
            raise RuleViolation(
                f"event {ref} does not exist in this context", code=ErrorCode.UNKNOWN_REF
            )
        if action.kind != ACTION:
            raise RuleViolation(
                f"{ref} is a {action.kind} event, not an action", code=ErrorCode.NOT_AN_ACTION
            )
        if action.request_state != REQUEST_OPEN:
            raise RuleViolation(
                f"action {ref} is not pending: its result or cancellation arrived already",
                code=ErrorCode.ACTION_NOT_PENDING,
            )
        why = reason or "no reason given"
        return append_event(
            context_id,
            kind=TOOL_RESULT,
            content=f"cancelled by {by}: {why}",
            payload={"cancelled": True, "by": by, "reason": reason},
            thread=thread or action.thread,
            delivers=[ref],
            idempotency_key=idempotency_key,
        ).event
