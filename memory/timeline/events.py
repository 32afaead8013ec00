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
    ErrorCode,
    InvalidField,
    InvalidRequest,
    MaintenanceRequired,
    RuleViolation,
)
from memory.idempotency import check_key, reused, same_json
from memory.kinds import (
    ACTION,
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
from memory.requests.events import ActionIn, EventAppendIn
from memory.shapes.context import pressure_json
from memory.timeline.inserts import insert_event
from memory.tokens import observation_tokens
from memory.vocabulary import (
    MAIN_THREAD,
    THREAD_MAX,
    event_ref,
    event_seq,
    is_thread_name,
    not_an_event_ref,
    seq_of,
)


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
        raise InvalidRequest(not_an_event_ref(ref, "@e17"), details=[{"ref": ref}])
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
    """`append` of the event these fields describe, read by `EventAppendIn` (InvalidRequest
    naming the failing field, or 413 `too_large`). `replaying` (memory.versions.replay
    only): history being rebuilt was admitted when it was written."""
    fields = {"kind": kind, "content": content, "payload": payload, "thread": thread}
    fields.update(delivers=delivers or [], idempotency_key=idempotency_key)
    return append(context_id, EventAppendIn.read(fields, replaying=replaying))


def append(context_id: int, event: EventAppendIn) -> AppendResult:
    """Append a client event under the context row lock. A retry with the same idempotency
    key returns the first event (`created` false) and writes nothing; Conflict
    `idempotency_key_reused` when the key's event differs, RuleViolation `unknown_ref` when
    `delivers` names no request or action (R3)."""
    return _append(context_id, Draft.of(event))


def register_action(
    context_id: int,
    *,
    name: str,
    arguments: Any = None,
    thread: str | None = None,
    idempotency_key: str | None = None,
) -> AppendResult:
    """`register` of the action these fields describe, read by `ActionIn`."""
    fields = {"name": name, "arguments": arguments, "thread": thread}
    return register(context_id, ActionIn.read({**fields, "idempotency_key": idempotency_key}))


def register(context_id: int, action: ActionIn) -> AppendResult:
    """Record an external action before it runs (R12, R25), under the context row lock;
    MaintenanceRequired (`maintenance_required`, the pressure in `details`) in maintenance.

    The action stays pending until a tool result names it in `delivers`."""
    payload = {"name": action.name, "arguments": action.arguments}
    thread = action.thread or MAIN_THREAD
    draft = Draft(ACTION, action.name, payload, thread, [], action.idempotency_key)
    return _append(context_id, draft, gate_maintenance=True)


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
    and nothing is written (Conflict `idempotency_key_reused` when it differs).
    InvalidRequest `too_large` (413) when `content` is over MAX_CONTENT_CHARS, the bound of
    every event's text: nothing is written."""
    key = check_key(idempotency_key)
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidRequest(
            f"the recall result would be {len(content)} characters, over an event's limit of "
            f"{MAX_CONTENT_CHARS}; recall it without include_events (read large events with "
            "read_event) or with fewer nodes",
            code=ErrorCode.TOO_LARGE,
            details=[{"chars": len(content), "limit_chars": MAX_CONTENT_CHARS}],
        )
    draft = Draft(RECALL_RESULT, content, payload, check_thread(thread), [], key)
    return _append(context_id, draft).event


@dataclass(frozen=True)
class Draft:
    """An event to append, its fields checked: the thread named (`main` by default), the
    delivered refs read as seqs."""

    kind: str
    content: str
    payload: Any
    thread: str
    delivered_seqs: list[int]
    idempotency_key: str | None

    @classmethod
    def of(cls, event: EventAppendIn) -> Draft:
        """The draft of a validated client event."""
        delivered = [event_seq(ref) for ref in event.delivers]
        thread = event.thread or MAIN_THREAD
        return cls(
            event.kind, event.content, event.payload, thread, delivered, event.idempotency_key
        )

    def repeats(self, existing: Event) -> bool:
        """Whether this is a retry of `existing`, the event holding its idempotency key:
        the same event in full (kind, content, payload, thread, delivers), else the key is
        reused for a different event."""
        return (
            existing.kind == self.kind
            and existing.content == self.content
            and existing.thread == self.thread
            and list(existing.delivers) == self.delivered_seqs
            and same_json(existing.payload, self.payload)
        )


def _append(context_id: int, draft: Draft, gate_maintenance: bool = False) -> AppendResult:
    with context_gate(context_id):
        return _append_locked(context_id, draft, gate_maintenance)


@transaction.atomic
def _append_locked(context_id: int, draft: Draft, gate_maintenance: bool) -> AppendResult:
    context = lock_context(context_id, allow_frozen=True)  # a retry gets its first event
    key = draft.idempotency_key
    if key is not None:
        existing = Event.objects.filter(context_id=context.pk, idempotency_key=key).first()
        if existing is not None:
            if not draft.repeats(existing):
                what = f"a different event ({existing.ref})"
                raise reused(key, what, details=[{"ref": existing.ref}])
            return AppendResult(existing, created=False)
    refuse_frozen(context)
    if gate_maintenance:
        _refuse_in_maintenance(context)
    seqs = draft.delivered_seqs
    if seqs:
        _check_delivery_targets(context.pk, seqs)
    event = next_event(
        context, draft.kind, draft.thread, draft.content, draft.payload, key, seqs, timezone.now()
    )
    event.pk = insert_event(context, event)
    if seqs:
        Event.objects.filter(
            context_id=context.pk, seq__in=seqs, request_state=REQUEST_OPEN
        ).update(request_state=REQUEST_DELIVERED, delivered_by_seq=event.seq)
    announce_events(context, event)
    return AppendResult(event, created=True)


def _refuse_in_maintenance(context: LockedContext) -> None:
    """Actions are refused while the context is in maintenance (R12)."""
    state = pressure_state(context)
    if state.in_maintenance:
        raise MaintenanceRequired(
            f"context is in maintenance ({state.used_tokens}/{state.capacity_tokens} tokens); "
            f"digest observations, slim frames or create successors until usage falls below "
            f"{context.maintenance_exit_percent}% before registering new actions",
            details=[pressure_json(state)],
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
