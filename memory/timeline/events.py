"""Appending events to a context's history (R2, R3, R8, R25, R30).

Every append takes the context row lock, which allocates `seq` and orders appends with
commits and evaluations. Events never change afterwards except their activity flag,
pending flag and request state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memory.broadcast import broadcast_after_commit
from memory.errors import Conflict, InvalidRequest, MaintenanceRequired, RuleViolation
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
from memory.limits import MAX_BULK_EVENTS, MAX_CONTENT_CHARS, MAX_DELIVERS
from memory.locking import LockedContext, context_gate, lock_context
from memory.models import Event
from memory.pressure import pressure_state
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
        raise InvalidRequest(
            f"thread must be 1-{THREAD_MAX} characters: letters, digits, '.', '_', ':', '-'",
            code="invalid_thread",
            details=[{"field": "thread"}],
        )
    return thread


def parse_event_ref(ref: Any) -> int:
    """The sequence number of an event ref; InvalidRequest when `ref` is not one."""
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
) -> AppendResult:
    """Append a client event (one of APPENDABLE_KINDS). A retry with the same idempotency
    key returns the first event and writes nothing."""
    if kind not in APPENDABLE_KINDS:
        raise InvalidRequest(
            f"kind must be one of {', '.join(APPENDABLE_KINDS)}; got {kind!r}",
            code="invalid_kind",
            details=[{"field": "kind"}],
        )
    return _append(
        context_id,
        kind=kind,
        content=content,
        payload=payload,
        thread=thread,
        delivers=delivers or [],
        idempotency_key=idempotency_key,
    )


def register_action(
    context_id: int,
    *,
    name: str,
    arguments: Any = None,
    thread: str | None = None,
    idempotency_key: str | None = None,
) -> AppendResult:
    """Record an external action before it runs (R12, R25); refused in maintenance.

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
    context_id: int, *, content: str, payload: Any, thread: str | None
) -> Event:
    """A recall the model asked for enters as an observation (R30)."""
    return _append(
        context_id,
        kind=RECALL_RESULT,
        content=content,
        payload=payload,
        thread=thread,
        delivers=[],
        idempotency_key=None,
    ).event


def _append(context_id: int, **kwargs: Any) -> AppendResult:
    with context_gate(context_id):
        return _append_locked(context_id, **kwargs)


@transaction.atomic
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
) -> AppendResult:
    thread = check_thread(thread)
    if not isinstance(content, str):
        raise InvalidRequest("content must be a string", details=[{"field": "content"}])
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidRequest(
            f"content is longer than {MAX_CONTENT_CHARS} characters", code="too_large"
        )
    if "\x00" in content:
        raise InvalidRequest(
            "content must not contain NUL characters", details=[{"field": "content"}]
        )
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= 200
    ):
        raise InvalidRequest("idempotency_key must be a string of 1-200 characters")
    if not isinstance(delivers, list):
        raise InvalidRequest("delivers must be a list of event references")
    delivered_seqs = [parse_event_ref(ref) for ref in delivers]

    context = lock_context(context_id)
    if idempotency_key is not None:
        existing = Event.objects.filter(
            context_id=context.pk, idempotency_key=idempotency_key
        ).first()
        if existing is not None:
            if existing.kind != kind or existing.content != content or existing.thread != thread:
                raise Conflict(
                    f"idempotency_key {idempotency_key!r} was already used for a different event ({existing.ref})",
                    code="idempotency_key_reused",
                    details=[{"ref": existing.ref}],
                )
            return AppendResult(existing, created=False)
    if gate_maintenance:
        state = pressure_state(context)
        if state.in_maintenance:
            raise MaintenanceRequired(
                f"context is in maintenance ({state.used_tokens}/{state.capacity_tokens} tokens); "
                f"digest observations, slim frames or create successors until usage falls below "
                f"{context.maintenance_exit_percent}% before registering new actions",
                details=[state.as_dict()],
            )
    if delivered_seqs:
        _check_delivery_targets(context.pk, delivered_seqs)

    context.last_seq += 1
    is_observation = kind in OBSERVATION_KINDS
    tokens = observation_tokens(content, context.observation_budget_tokens)
    if is_observation:
        context.used_tokens += tokens
        context.in_maintenance = pressure_state(context).in_maintenance
    event = Event(
        context_id=context.pk,
        seq=context.last_seq,
        kind=kind,
        thread=thread,
        content=content,
        payload=payload,
        created_at=timezone.now(),
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
    event.pk = _insert_event(context, event)
    if delivered_seqs:
        Event.objects.filter(
            context_id=context.pk, seq__in=delivered_seqs, request_state=REQUEST_OPEN
        ).update(request_state=REQUEST_DELIVERED, delivered_by_seq=event.seq)
    broadcast_after_commit(
        context.slug,
        {
            "type": "event",
            "ref": event.ref,
            "kind": kind,
            "thread": thread,
            "version": context.version,
            "tick": context.tick,
        },
    )
    return AppendResult(event, created=True)


_ITEM_FIELDS = frozenset({"kind", "content", "payload", "thread", "delivers", "idempotency_key"})


@dataclass(frozen=True)
class _Item:
    kind: str
    content: str
    payload: Any
    thread: str
    delivered_seqs: list[int]
    idempotency_key: str | None


def append_events(context_id: int, items: list[dict[str, Any]]) -> list[AppendResult]:
    """Append several client events atomically and in order (R50): every item is checked
    first, so one bad item refuses the whole batch and writes nothing. Idempotency holds per
    item: an item whose key names an existing event answers that event (a retried batch
    writes nothing twice). An item may deliver a request appended earlier in the batch."""
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK_EVENTS:
        raise InvalidRequest(
            f"events must be a list of 1-{MAX_BULK_EVENTS} events", details=[{"field": "events"}]
        )
    checked = [_check_item(index, item) for index, item in enumerate(items)]
    with context_gate(context_id):
        return _append_many_locked(context_id, checked)


def _check_item(index: int, item: Any) -> _Item:
    def bad(message: str, field: str, code: str = "invalid_request") -> InvalidRequest:
        return InvalidRequest(
            f"events[{index}]: {message}",
            code=code,
            details=[
                {"index": index, "field": f"events.{index}.{field}" if field else f"events.{index}"}
            ],
        )

    if not isinstance(item, dict):
        raise bad("each event must be an object", "")
    unknown = sorted(set(item) - _ITEM_FIELDS)
    if unknown:
        raise bad(f"unknown field {unknown[0]!r}", str(unknown[0]))
    kind = item.get("kind")
    if kind not in APPENDABLE_KINDS:
        raise bad(f"kind must be one of {', '.join(APPENDABLE_KINDS)}; got {kind!r}", "kind")
    content = item.get("content")
    if not isinstance(content, str):
        raise bad("content must be a string", "content")
    if len(content) > MAX_CONTENT_CHARS:
        raise bad(f"content is longer than {MAX_CONTENT_CHARS} characters", "content", "too_large")
    if "\x00" in content:
        raise bad("content must not contain NUL characters", "content")
    try:
        thread = check_thread(item.get("thread"))
    except InvalidRequest as exc:
        raise bad(exc.message, "thread", exc.code) from exc
    key = item.get("idempotency_key")
    if key is not None and (not isinstance(key, str) or not 0 < len(key) <= 200):
        raise bad("idempotency_key must be a string of 1-200 characters", "idempotency_key")
    delivers = item.get("delivers") or []
    if not isinstance(delivers, list) or len(delivers) > MAX_DELIVERS:
        raise bad(f"delivers must be a list of at most {MAX_DELIVERS} event references", "delivers")
    try:
        delivered = [parse_event_ref(ref) for ref in delivers]
    except InvalidRequest as exc:
        raise bad(exc.message, "delivers") from exc
    return _Item(kind, content, item.get("payload"), thread, delivered, key)


@transaction.atomic
def _append_many_locked(context_id: int, items: list[_Item]) -> list[AppendResult]:
    context = lock_context(context_id)
    keys = [item.idempotency_key for item in items if item.idempotency_key is not None]
    existing: dict[str, Event] = {}
    if keys:
        existing = {
            e.idempotency_key: e
            for e in Event.objects.filter(context_id=context.pk, idempotency_key__in=keys)
            if e.idempotency_key is not None
        }
    outcomes: list[Event | None] = []  # None: to be written (at the matching position)
    new_events: list[Event] = []
    batch_kinds: dict[int, str] = {}
    now = timezone.now()
    for index, item in enumerate(items):
        key = item.idempotency_key
        first = existing.get(key) if key is not None else None
        if first is not None:
            if (
                first.kind != item.kind
                or first.content != item.content
                or first.thread != item.thread
            ):
                raise Conflict(
                    f"events[{index}]: idempotency_key {key!r} was already used for a different "
                    f"event ({first.ref})",
                    code="idempotency_key_reused",
                    details=[{"index": index, "ref": first.ref}],
                )
            outcomes.append(first)
            continue
        context.last_seq += 1
        is_observation = item.kind in OBSERVATION_KINDS
        tokens = observation_tokens(item.content, context.observation_budget_tokens)
        if is_observation:
            context.used_tokens += tokens
            context.in_maintenance = pressure_state(context).in_maintenance
        event = Event(
            context_id=context.pk,
            seq=context.last_seq,
            kind=item.kind,
            thread=item.thread,
            content=item.content,
            payload=item.payload,
            created_at=now,
            idempotency_key=key,
            size_chars=len(item.content),
            token_estimate=tokens,
            is_observation=is_observation,
            active=is_observation,
            status_version=0,
            pending=item.kind in INPUT_KINDS,
            delivers=item.delivered_seqs,
            request_state=REQUEST_OPEN if item.kind in (USER_MESSAGE, ACTION) else None,
        )
        if key is not None:
            existing[key] = event  # a repeat of the key later in the batch answers this one
        batch_kinds[event.seq] = item.kind
        outcomes.append(None)
        new_events.append(event)
    _check_batch_deliveries(context.pk, new_events, batch_kinds)
    if new_events:
        by_seq = {event.seq: event for event in new_events}
        stored_targets: dict[int, int] = {}
        for event in new_events:
            for seq in event.delivers:
                target = by_seq.get(seq)
                if target is None:
                    stored_targets.setdefault(seq, event.seq)
                elif target.request_state == REQUEST_OPEN:
                    target.request_state = REQUEST_DELIVERED
                    target.delivered_by_seq = event.seq
        _insert_events(context, new_events)
        for seq, by in stored_targets.items():
            Event.objects.filter(context_id=context.pk, seq=seq, request_state=REQUEST_OPEN).update(
                request_state=REQUEST_DELIVERED, delivered_by_seq=by
            )
        last = new_events[-1]
        broadcast_after_commit(
            context.slug,
            {
                "type": "event",
                "ref": last.ref,
                "count": len(new_events),
                "kind": last.kind,
                "thread": last.thread,
                "version": context.version,
                "tick": context.tick,
            },
        )
    written = iter(new_events)
    return [
        AppendResult(next(written), created=True)
        if outcome is None
        else AppendResult(outcome, created=False)
        for outcome in outcomes
    ]


def _check_batch_deliveries(
    context_id: int, events: list[Event], batch_kinds: dict[int, str]
) -> None:
    """Delivery targets are requests or actions already stored, or earlier in the batch."""
    stored = sorted({seq for e in events for seq in e.delivers if seq not in batch_kinds})
    found: dict[int, str] = {}
    if stored:
        found = dict(
            Event.objects.filter(context_id=context_id, seq__in=stored).values_list("seq", "kind")
        )
    problems: list[dict[str, Any]] = []
    for event in events:
        for seq in event.delivers:
            kind = batch_kinds.get(seq) if seq < event.seq else None
            if kind is None:
                kind = found.get(seq)
            if kind is None:
                problems.append({"ref": event_ref(seq), "problem": "does not exist"})
            elif kind not in (USER_MESSAGE, ACTION):
                problems.append({"ref": event_ref(seq), "problem": "is not a request"})
    if problems:
        raise RuleViolation(
            "delivers must name user requests or actions of this context: "
            + ", ".join(f"{p['ref']} {p['problem']}" for p in problems),
            code="unknown_ref",
            details=[{"ref": p["ref"]} for p in problems],
        )


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
            code="unknown_ref",
            details=[{"ref": r} for r in missing + bad],
        )


def _insert_event(context: LockedContext, event: Event) -> int:
    """Insert the event, its index intent and the context's new counters in one round trip
    (appends are the API's most frequent write). Caller holds the context row lock."""
    with connection.cursor() as cur:
        cur.execute(
            "WITH ev AS ("
            " INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at,"
            " idempotency_key, size_chars, token_estimate, is_observation, active, status_version,"
            " pending, delivers, request_state)"
            " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, 0, %s, %s::bigint[], %s)"
            " RETURNING id),"
            " intent AS (INSERT INTO memory_indexintent (context_id, event_id, created_at)"
            " SELECT %s, id, %s FROM ev),"
            " ctx AS (UPDATE memory_context SET last_seq = %s, used_tokens = %s, in_maintenance = %s"
            " WHERE id = %s)"
            " SELECT id FROM ev",
            [
                *_event_values(context, event),
                context.pk,
                event.created_at,
                context.last_seq,
                context.used_tokens,
                context.in_maintenance,
                context.pk,
            ],
        )
        row = cur.fetchone()
    assert row is not None
    return int(row[0])


def _event_values(context: LockedContext, event: Event) -> list[Any]:
    """The values of one event row shared by the single and the bulk insert, in the order
    context_id … request_state (status_version is the literal 0 in both statements)."""
    return [
        context.pk,
        event.seq,
        event.kind,
        event.thread,
        event.content,
        None if event.payload is None else json.dumps(event.payload, ensure_ascii=False),
        event.created_at,
        event.idempotency_key,
        event.size_chars,
        event.token_estimate,
        event.is_observation,
        event.active,
        event.pending,
        event.delivers,
        event.request_state,
    ]


_EVENT_COLUMNS = (
    "context_id, seq, kind, thread, content, payload, created_at, idempotency_key, size_chars,"
    " token_estimate, is_observation, active, status_version, pending, delivers, request_state,"
    " delivered_by_seq"
)


def _insert_events(context: LockedContext, events: list[Event]) -> None:
    """Insert a batch of events, their index intents and the context's new counters in one
    round trip; sets each event's pk. Caller holds the context row lock."""
    row = "(%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, 0, %s, %s::bigint[], %s, %s)"
    params: list[Any] = []
    for event in events:
        params += [*_event_values(context, event), event.delivered_by_seq]
    now = events[-1].created_at
    params += [context.pk, now, context.last_seq, context.used_tokens, context.in_maintenance]
    params.append(context.pk)
    with connection.cursor() as cur:
        cur.execute(
            f"WITH ev AS (INSERT INTO memory_event ({_EVENT_COLUMNS}) VALUES "  # noqa: S608 - constant columns; rows are placeholders only
            + ", ".join([row] * len(events))
            + " RETURNING id, seq),"
            " intent AS (INSERT INTO memory_indexintent (context_id, event_id, created_at)"
            " SELECT %s, id, %s FROM ev),"
            " ctx AS (UPDATE memory_context SET last_seq = %s, used_tokens = %s, in_maintenance = %s"
            " WHERE id = %s)"
            " SELECT id, seq FROM ev",
            params,
        )
        ids = dict((seq, pk) for pk, seq in cur.fetchall())
    for event in events:
        event.pk = ids[event.seq]
