"""Appending events to a context's history (R2, R3, R8, R25, R30).

Every append takes the context row lock, which allocates `seq` and orders appends with
commits and evaluations. Events never change afterwards except their activity flag,
pending flag and request state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.broadcast import broadcast_after_commit
from memory.errors import (
    Conflict,
    ErrorCode,
    InvalidField,
    InvalidRequest,
    MaintenanceRequired,
    RuleViolation,
)
from memory.kinds import (
    ACTION,
    APPENDABLE_KINDS,
    INPUT_KINDS,
    OBSERVATION_KINDS,
    RECALL_RESULT,
    REQUEST_DELIVERED,
    REQUEST_OPEN,
    USER_MESSAGE,
)
from memory.limits import MAX_CONTENT_CHARS
from memory.locking import LockedContext, context_gate, lock_context, refuse_frozen
from memory.models import Event
from memory.pressure import pressure_state
from memory.timeline.inserts import insert_event
from memory.tokens import observation_tokens
from memory.vocabulary import MAIN_THREAD, THREAD_MAX, event_ref, is_thread_name, seq_of


@dataclass(frozen=True)
class AppendResult:
    event: Event
    created: bool


def check_thread(thread: str | None) -> str:
    """The thread name to store: `main` when absent (None); InvalidRequest `invalid_thread`
    when malformed, empty included (R8: 1-100 characters, one rule for every write path)."""
    if thread is None:
        return MAIN_THREAD
    if not is_thread_name(thread):
        raise InvalidField(
            "thread",
            f"thread must be 1-{THREAD_MAX} characters: letters, digits, '.', '_', ':', '-'",
        )
    return thread


def parse_event_ref(ref: Any) -> int:
    """The sequence number of an event ref; InvalidRequest (`invalid_request`, the ref in
    `details`) when `ref` is not one."""
    seq = seq_of(ref)
    if seq is None:
        raise InvalidRequest(
            f'{ref!r} is not an event reference like "@e17"', details=[{"ref": ref}]
        )
    return seq


def append_event(
    context_id: int,
    *,
    kind: str,
    content: str,
    payload: Any = None,
    thread: str | None = None,
    delivers: list[str] | None = None,
    idempotency_key: str | None = None,
    replaying: bool = False,
) -> AppendResult:
    """Append a client event (one of APPENDABLE_KINDS; `content` up to MAX_CONTENT_CHARS
    characters) under the context row lock. A retry with the same idempotency key returns
    the first event (`created` false) and writes nothing. InvalidRequest (`invalid_kind`,
    `invalid_thread`, `too_large`, `invalid_request`), Conflict `idempotency_key_reused`,
    RuleViolation `unknown_ref` when `delivers` names no request or action (R3).
    `replaying` (memory.versions.replay only): see `content_problem`."""
    if kind not in APPENDABLE_KINDS:
        raise InvalidField(
            "kind", f"kind must be one of {', '.join(APPENDABLE_KINDS)}; got {kind!r}"
        )
    return _append(
        context_id,
        kind=kind,
        content=content,
        payload=payload,
        thread=thread,
        delivers=delivers or [],
        idempotency_key=idempotency_key,
        replaying=replaying,
    )


def register_action(
    context_id: int,
    *,
    name: str,
    arguments: Any = None,
    thread: str | None = None,
    idempotency_key: str | None = None,
) -> AppendResult:
    """Record an external action before it runs (R12, R25), under the context row lock;
    MaintenanceRequired (`maintenance_required`, the pressure in `details`) in maintenance,
    InvalidRequest for a name that is empty or over 200 characters.

    The action stays pending until a tool result names it in `delivers`."""
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise InvalidRequest("action name must be a non-empty string of at most 200 characters")
    return _append(
        context_id,
        kind=ACTION,
        content=name,
        payload={"name": name, "arguments": arguments},
        thread=thread,
        delivers=[],
        idempotency_key=idempotency_key,
        gate_maintenance=True,
    )


def append_recall_result(
    context_id: int,
    *,
    content: str,
    payload: Any,
    thread: str | None,
    idempotency_key: str | None = None,
) -> Event:
    """A recall the model asked for enters as an observation (R30), appended under the
    context row lock. Under an `idempotency_key` already used, the first event is returned
    and nothing is written (Conflict `idempotency_key_reused` when it differs)."""
    return _append(
        context_id,
        kind=RECALL_RESULT,
        content=content,
        payload=payload,
        thread=thread,
        delivers=[],
        idempotency_key=idempotency_key,
    ).event


def _append(context_id: int, **kwargs: Any) -> AppendResult:
    with context_gate(context_id):
        return _append_locked(context_id, **kwargs)


@transaction.atomic
def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same: objects whatever their key order, numbers by
    value (`1E2` is `100`), but a boolean is not a number (`true` is not `1`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def same_event(
    existing: Event, kind: str, content: str, payload: Any, thread: str, delivered: list[int]
) -> bool:
    """Whether an append is a retry of `existing`, the event holding its idempotency key:
    the same event in full (kind, content, payload, thread, delivers), else the key is
    reused for a different event."""
    return (
        existing.kind == kind
        and existing.content == content
        and existing.thread == thread
        and list(existing.delivers) == list(delivered)
        and same_json(existing.payload, payload)
    )


def _append_locked(
    context_id: int,
    *,
    kind: str,
    content: str,
    payload: Any,
    thread: str | None,
    delivers: list[str],
    idempotency_key: str | None,
    gate_maintenance: bool = False,
    replaying: bool = False,
) -> AppendResult:
    thread = check_thread(thread)
    delivered_seqs = _check_append(kind, content, idempotency_key, delivers, replaying)
    context = lock_context(context_id, allow_frozen=True)  # a retry gets its first event
    if idempotency_key is not None:
        existing = Event.objects.filter(
            context_id=context.pk, idempotency_key=idempotency_key
        ).first()
        if existing is not None:
            if not same_event(existing, kind, content, payload, thread, delivered_seqs):
                raise Conflict(
                    f"idempotency_key {idempotency_key!r} was already used for a different event ({existing.ref})",
                    code=ErrorCode.IDEMPOTENCY_KEY_REUSED,
                    details=[{"ref": existing.ref}],
                )
            return AppendResult(existing, created=False)
    refuse_frozen(context)
    if gate_maintenance:
        _refuse_in_maintenance(context)
    if delivered_seqs:
        _check_delivery_targets(context.pk, delivered_seqs)
    event = next_event(
        context, kind, thread, content, payload, idempotency_key, delivered_seqs, timezone.now()
    )
    event.pk = insert_event(context, event)
    if delivered_seqs:
        Event.objects.filter(
            context_id=context.pk, seq__in=delivered_seqs, request_state=REQUEST_OPEN
        ).update(request_state=REQUEST_DELIVERED, delivered_by_seq=event.seq)
    announce_events(context, event)
    return AppendResult(event, created=True)


def content_problem(
    kind: str, content: Any, *, replaying: bool = False
) -> tuple[str, ErrorCode] | None:
    """(message, code) of what is wrong with an event's `content`, or None: a string of at
    most MAX_CONTENT_CHARS characters without NUL; a user message must say something (an
    empty one would open a request (R3) that asks for nothing). Other kinds may be empty:
    a tool can print nothing. `replaying`: history being rebuilt was admitted when it was
    written, so only the storage rules apply (an older version let blank messages in)."""
    if not isinstance(content, str):
        return "content must be a string", ErrorCode.INVALID_REQUEST
    if len(content) > MAX_CONTENT_CHARS:
        return f"content is longer than {MAX_CONTENT_CHARS} characters", ErrorCode.TOO_LARGE
    if "\x00" in content:
        return "content must not contain NUL characters", ErrorCode.INVALID_REQUEST
    if replaying:
        return None
    if kind == USER_MESSAGE and not any(c.isprintable() and not c.isspace() for c in content):
        # Only spaces or invisible characters (zero-width space, BOM): nothing is asked.
        return "a user_message must have content (it opens a request)", ErrorCode.INVALID_REQUEST
    return None


def _check_append(
    kind: str, content: Any, idempotency_key: Any, delivers: Any, replaying: bool
) -> list[int]:
    """The checks of a single append's arguments; the seqs its `delivers` name."""
    problem = content_problem(kind, content, replaying=replaying)
    if problem is not None:
        raise InvalidRequest(problem[0], code=problem[1], details=[{"field": "content"}])
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= 200
    ):
        raise InvalidRequest(
            "idempotency_key must be a string of 1-200 characters",
            details=[{"field": "idempotency_key"}],
        )
    if not isinstance(delivers, list):
        raise InvalidRequest("delivers must be a list of event references")
    return [parse_event_ref(ref) for ref in delivers]


def _refuse_in_maintenance(context: LockedContext) -> None:
    """Actions are refused while the context is in maintenance (R12)."""
    state = pressure_state(context)
    if state.in_maintenance:
        raise MaintenanceRequired(
            f"context is in maintenance ({state.used_tokens}/{state.capacity_tokens} tokens); "
            f"digest observations, slim frames or create successors until usage falls below "
            f"{context.maintenance_exit_percent}% before registering new actions",
            details=[state.as_dict()],
        )


def next_event(
    context: LockedContext,
    kind: str,
    thread: str,
    content: str,
    payload: Any,
    idempotency_key: str | None,
    delivered_seqs: list[int],
    now: datetime,
) -> Event:
    """The next event of the context, not yet stored: takes the next `seq` and, for an
    observation, adds its token estimate to the context's usage. Caller holds the row lock."""
    context.last_seq += 1
    is_observation = kind in OBSERVATION_KINDS
    tokens = observation_tokens(content, context.observation_budget_tokens)
    if is_observation:
        context.used_tokens += tokens
        context.in_maintenance = pressure_state(context).in_maintenance
    return Event(
        context_id=context.pk,
        seq=context.last_seq,
        kind=kind,
        thread=thread,
        content=content,
        payload=payload,
        created_at=now,
        idempotency_key=idempotency_key,
        size_chars=len(content),
        token_estimate=tokens,
        is_observation=is_observation,
        active=is_observation,
        status_version=0,
        pending=kind in INPUT_KINDS,
        delivers=delivered_seqs,
        request_state=REQUEST_OPEN if kind in (USER_MESSAGE, ACTION) else None,
    )


def announce_events(context: LockedContext, last: Event, count: int | None = None) -> None:
    """Tell the explorer's live view, once committed, about the last new event (and, for a
    bulk append, how many there were)."""
    message: dict[str, Any] = {"type": "event", "ref": last.ref}
    if count is not None:
        message["count"] = count
    message.update(
        {"kind": last.kind, "thread": last.thread, "version": context.version, "tick": context.tick}
    )
    broadcast_after_commit(context.slug, message)


def _check_delivery_targets(context_id: int, seqs: list[int]) -> None:
    targets = list(
        Event.objects.filter(context_id=context_id, seq__in=seqs).only("pk", "seq", "kind")
    )
    found = {e.seq for e in targets}
    missing = [event_ref(s) for s in seqs if s not in found]
    bad = [e.ref for e in targets if e.kind not in (USER_MESSAGE, ACTION)]
    if missing or bad:
        raise RuleViolation(
            "delivers must name user requests or actions of this context: "
            + ", ".join(
                [f"{r} does not exist" for r in missing] + [f"{r} is not a request" for r in bad]
            ),
            code=ErrorCode.UNKNOWN_REF,
            details=[{"ref": r} for r in missing + bad],
        )
