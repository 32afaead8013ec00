"""Appending several client events at once (R50): checked first, written in one statement.

Each item follows the rules of a single append (memory.timeline.events); the batch is
atomic and ordered, idempotent per item, and an item may deliver a request appended earlier
in the batch. An item that changes the context's maintenance flag ends a statement, so the
maintenance log names that item, as its single append would (and replay does, R51).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.db import transaction
from django.utils import timezone

from memory.errors import Conflict, ErrorCode, InvalidRequest, RuleViolation
from memory.kinds import ACTION, APPENDABLE_KINDS, REQUEST_DELIVERED, REQUEST_OPEN, USER_MESSAGE
from memory.limits import MAX_BULK_EVENTS, MAX_DELIVERS
from memory.locking import LockedContext, context_gate, lock_context, refuse_frozen
from memory.models import Event
from memory.timeline.events import (
    AppendResult,
    announce_events,
    check_thread,
    content_problem,
    next_event,
    parse_event_ref,
    same_event,
)
from memory.timeline.inserts import Counters, insert_events
from memory.vocabulary import event_ref

_ITEM_FIELDS = frozenset({"kind", "content", "payload", "thread", "delivers", "idempotency_key"})


@dataclass(frozen=True)
class _Item:
    kind: str
    content: str
    payload: Any
    thread: str
    delivered_seqs: list[int]
    idempotency_key: str | None


def append_events(
    context_id: int, items: list[dict[str, Any]], *, replaying: bool = False
) -> list[AppendResult]:
    """Append several client events atomically and in order (R50): every item is checked
    first, so one bad item refuses the whole batch and writes nothing. Idempotency holds per
    item: an item whose key names an existing event answers that event (a retried batch
    writes nothing twice). An item may deliver a request appended earlier in the batch.

    One result per item, in order. Takes the context row lock once for the batch.
    InvalidRequest (`details` name `events[<index>].<field>`) for 1-MAX_BULK_EVENTS items
    or an item out of shape, Conflict `idempotency_key_reused`, RuleViolation `unknown_ref`.
    `replaying` (memory.versions.replay only): see `events.content_problem`."""
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK_EVENTS:
        raise InvalidRequest(
            f"events must be a list of 1-{MAX_BULK_EVENTS} events", details=[{"field": "events"}]
        )
    checked = [_check_item(index, item, replaying) for index, item in enumerate(items)]
    with context_gate(context_id):
        return _append_many_locked(context_id, checked)


def _check_item(index: int, item: Any, replaying: bool = False) -> _Item:
    def bad(
        message: str, field: str, code: ErrorCode = ErrorCode.INVALID_REQUEST
    ) -> InvalidRequest:
        return InvalidRequest(
            f"events[{index}]: {message}",
            code=code,
            details=[
                {
                    "index": index,
                    "field": f"events[{index}].{field}" if field else f"events[{index}]",
                }
            ],
        )

    if not isinstance(item, dict):
        raise bad("each event must be an object", "")
    unknown = sorted(set(item) - _ITEM_FIELDS)
    if unknown:
        raise bad(f"unknown field {unknown[0]!r}", str(unknown[0]))
    kind = item.get("kind")
    if kind not in APPENDABLE_KINDS:
        raise bad(
            f"kind must be one of {', '.join(APPENDABLE_KINDS)}; got {kind!r}",
            "kind",
            ErrorCode.INVALID_KIND,
        )
    content = item.get("content")
    problem = content_problem(kind, content, replaying=replaying)
    if problem is not None:
        raise bad(problem[0], "content", problem[1])
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
    # content_problem found nothing, so content is a string.
    return _Item(kind, cast(str, content), item.get("payload"), thread, delivered, key)


def _key_reused(index: int, key: str, first: Event, first_index: int | None) -> Conflict:
    """`idempotency_key_reused` for item `index`: naming the stored event that holds the key,
    or the earlier item of this batch (whose event is not written, so it has no ref)."""
    if first_index is not None:
        return Conflict(
            f"events[{index}]: idempotency_key {key!r} is also the key of events[{first_index}] "
            "of this batch, a different event",
            code=ErrorCode.IDEMPOTENCY_KEY_REUSED,
            details=[{"index": index, "other_index": first_index}],
        )
    return Conflict(
        f"events[{index}]: idempotency_key {key!r} was already used for a different "
        f"event ({first.ref})",
        code=ErrorCode.IDEMPOTENCY_KEY_REUSED,
        details=[{"index": index, "ref": first.ref}],
    )


@transaction.atomic
def _append_many_locked(context_id: int, items: list[_Item]) -> list[AppendResult]:
    context = lock_context(context_id, allow_frozen=True)  # a retried batch gets its events
    keys = [item.idempotency_key for item in items if item.idempotency_key is not None]
    existing: dict[str, Event] = {}
    if keys:
        existing = {
            e.idempotency_key: e
            for e in Event.objects.filter(context_id=context.pk, idempotency_key__in=keys)
            if e.idempotency_key is not None
        }
    in_batch: dict[str, int] = {}  # a key's first item in this batch
    outcomes: list[Event | None] = []  # None: to be written (at the matching position)
    new_events: list[Event] = []
    flag_changes: list[tuple[int, Counters]] = []  # (events up to here, counters after them)
    batch_kinds: dict[int, str] = {}
    now = timezone.now()
    for index, item in enumerate(items):
        key = item.idempotency_key
        first = existing.get(key) if key is not None else None
        if key is not None and first is not None:
            if not same_event(
                first, item.kind, item.content, item.payload, item.thread, item.delivered_seqs
            ):
                raise _key_reused(index, key, first, in_batch.get(key))
            outcomes.append(first)
            continue
        was_in_maintenance = context.in_maintenance
        event = next_event(
            context,
            item.kind,
            item.thread,
            item.content,
            item.payload,
            key,
            item.delivered_seqs,
            now,
        )
        if key is not None:
            existing[key] = event  # a repeat of the key later in the batch answers this one
            in_batch[key] = index
        batch_kinds[event.seq] = item.kind
        outcomes.append(None)
        new_events.append(event)
        if context.in_maintenance != was_in_maintenance:
            flag_changes.append((len(new_events), Counters.of(context)))
    if new_events:  # a batch of retries alone writes nothing: it is answered even when frozen
        refuse_frozen(context)
    _check_batch_deliveries(context.pk, new_events, batch_kinds)
    if new_events:
        _write(context, new_events, flag_changes)
    written = iter(new_events)
    return [
        AppendResult(next(written), created=True)
        if outcome is None
        else AppendResult(outcome, created=False)
        for outcome in outcomes
    ]


def _write(
    context: LockedContext, new_events: list[Event], flag_changes: list[tuple[int, Counters]]
) -> None:
    """Store the batch; requests it delivers become delivered, by the first event naming them
    (in the batch before the insert, already stored after it).

    One statement, or one more per maintenance flag change (`flag_changes`: how many events
    lead up to the change, the counters just after it): each statement stores the counters
    just after its last event, so the trigger that logs the flag names the event that
    changed it, not the batch's last (R50: as if appended one by one)."""
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
    start = 0
    for end, counters in flag_changes:
        insert_events(context, new_events[start:end], counters)
        start = end
    if start < len(new_events):
        insert_events(context, new_events[start:])
    for seq, by in stored_targets.items():
        Event.objects.filter(context_id=context.pk, seq=seq, request_state=REQUEST_OPEN).update(
            request_state=REQUEST_DELIVERED, delivered_by_seq=by
        )
    announce_events(context, new_events[-1], count=len(new_events))


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
            code=ErrorCode.UNKNOWN_REF,
            details=[{"ref": p["ref"]} for p in problems],
        )
