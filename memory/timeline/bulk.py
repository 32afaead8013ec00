"""Appending several client events at once (R50): checked first, written in one statement.

Each item follows the rules of a single append (memory.timeline.events); the batch is
atomic and ordered, idempotent per item, and an item may deliver a request appended earlier
in the batch. An item that changes the context's maintenance flag ends a statement, so the
maintenance log names that item, as its single append would (and replay does, R51).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.errors import Conflict, ErrorCode, RuleViolation
from memory.idempotency import reused
from memory.kinds import ACTION, REQUEST_DELIVERED, REQUEST_OPEN, USER_MESSAGE
from memory.locking import LockedContext, context_gate, lock_context, refuse_frozen
from memory.models import Event
from memory.requests.events import EventAppendIn, read_items
from memory.timeline.events import AppendResult, Draft, announce_events, next_event
from memory.timeline.inserts import Counters, insert_events
from memory.vocabulary import event_ref


def append_events(
    context_id: int,
    items: Sequence[EventAppendIn | Mapping[str, Any]],
    *,
    replaying: bool = False,
) -> list[AppendResult]:
    """Append several client events atomically and in order (R50): every item is checked
    first (by `EventAppendIn`, as a single append is), so one bad item refuses the whole
    batch and writes nothing. Idempotency holds per item: an item whose key names an
    existing event answers that event (a retried batch writes nothing twice). An item may
    deliver a request appended earlier in the batch.

    One result per item, in order. Takes the context row lock once for the batch.
    InvalidRequest (`details` `[{index, field}]`, the field like `events[1].kind`) for
    1-MAX_BULK_EVENTS items or an item out of shape, Conflict `idempotency_key_reused`,
    RuleViolation `unknown_ref`. `replaying` (memory.versions.replay only): history being
    rebuilt was admitted when it was written."""
    checked = [Draft.of(item) for item in read_items(list(items), replaying=replaying)]
    with context_gate(context_id):
        return _append_many_locked(context_id, checked)


def _key_reused(index: int, key: str, first: Event, first_index: int | None) -> Conflict:
    """`idempotency_key_reused` for item `index`: naming the stored event that holds the key,
    or the earlier item of this batch (whose event is not written, so it has no ref)."""
    where = f"events[{index}]: "
    if first_index is not None:
        what = f"events[{first_index}] of this batch, a different event"
        return reused(key, what, [{"index": index, "other_index": first_index}], where)
    what = f"a different event ({first.ref})"
    return reused(key, what, [{"index": index, "ref": first.ref}], where)


@transaction.atomic
def _append_many_locked(context_id: int, items: list[Draft]) -> list[AppendResult]:
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
            if not item.repeats(first):
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
