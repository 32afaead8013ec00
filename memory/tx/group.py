"""Group commit: transactions queued on one context by threads of one process, committed
together in one database transaction.

How it works: docs/internals.md, section `memory/tx/group.py`."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import connection, transaction

from memory.errors import MorphzError
from memory.hotsql import pipeline
from memory.locking import LockedContext, context_gate, send_lock

# A longer group makes its first writer wait for all the others; 16 keeps a group under a
# few dozen milliseconds on a busy machine while amortising the flush well.
MAX_GROUP = 16
# How long a leader may wait for the writers the last group had to queue again, so that they
# are locked, loaded and decided together (PostgreSQL's commit_delay, for the same reason).
# Waiting happens only while the context has had several writers at once: a lone writer
# never waits, and after a group of one, nobody waits.
GATHER_SECONDS = 0.002

Item = TypeVar("Item")
Decision = TypeVar("Decision")
Result = TypeVar("Result")


@dataclass(eq=False)
class _Waiting(Generic[Item, Result]):
    item: Item
    done: bool = False
    alone: bool = False
    result: Result | None = None
    error: Exception | None = None  # raised in the submitting thread


class _Queue:
    """The transactions waiting on one context, and whether a thread is committing them."""

    def __init__(self) -> None:
        self.items: deque[_Waiting] = deque()
        guard = threading.Lock()
        self.changed = threading.Condition(guard)  # an item is done, or no one leads
        self.arrived = threading.Condition(guard)  # an item was queued (the leader waits)
        self.leading = False
        self.last_group = 1


_queues: dict[int, _Queue] = {}
_queues_guard = threading.Lock()


@dataclass(frozen=True)
class Steps(Generic[Item, Decision, Result]):
    """How to commit one item: `decide` reads under the row lock and returns what to write
    (or a finished result, such as an idempotent replay), raising `MorphzError` to refuse;
    `write` sends its statements and returns a function giving the result once they have
    gone out (after the group's pipeline); `alone` commits one item in its own database
    transaction (the path taken inside an outer transaction and after a failed group).

    `begin` makes the group's scratch (passed to `decide` and `write`) for the context,
    inside the group's pipeline, once the row lock is asked for; `prefetch` is told of every item as it joins the group,
    before any of the group is decided, so it can send the item's reads without waiting."""

    decide: Callable[[LockedContext, Item, Any], Decision | Result]
    write: Callable[[LockedContext, Decision, Any], Callable[[], Result]]
    finished: Callable[[Decision | Result], bool]
    alone: Callable[[Item], Result]
    begin: Callable[[int], Any]
    prefetch: Callable[[Any, Item], None]


def commit_grouped(context_id: int, item: Item, steps: Steps[Item, Decision, Result]) -> Result:
    """Commit `item` on the context, grouped with the other threads' items queued there.

    Returns its result or raises its own `MorphzError`, as `steps.alone(item)` would. The
    first thread to find no one committing leads: it commits groups (holding the context's
    gate) until its own item is done; the others wait for theirs."""
    if connection.in_atomic_block:
        # The outer transaction owns the row lock until it ends: no grouping across it.
        return steps.alone(item)
    with _queues_guard:
        queue = _queues.setdefault(context_id, _Queue())
    waiting: _Waiting[Item, Result] = _Waiting(item)
    with queue.changed:
        queue.items.append(waiting)
        queue.arrived.notify()
        while not waiting.done and queue.leading:
            queue.changed.wait()
        lead = not waiting.done
        queue.leading = queue.leading or lead
    if lead:
        try:
            with context_gate(context_id):
                while not waiting.done:
                    _run_group(context_id, queue, steps)
        finally:
            with queue.changed:
                queue.leading = False
                queue.changed.notify_all()
    if waiting.alone:
        return steps.alone(item)
    if waiting.error is not None:
        raise waiting.error
    assert waiting.result is not None
    return waiting.result


def _take(queue: _Queue, limit: int) -> list[_Waiting[Item, Result]]:
    with queue.changed:
        return [queue.items.popleft() for _ in range(min(len(queue.items), limit))]


def _gather(queue: _Queue) -> list[_Waiting[Item, Result]]:
    """The first items of a group: as many as the last group held, once they are queued
    (waiting GATHER_SECONDS at most), or what is queued now."""
    with queue.changed:
        wanted = min(queue.last_group, MAX_GROUP)
        if len(queue.items) < wanted:
            queue.arrived.wait_for(lambda: len(queue.items) >= wanted, GATHER_SECONDS)
        return [queue.items.popleft() for _ in range(min(len(queue.items), MAX_GROUP))]


def _run_group(context_id: int, queue: _Queue, steps: Steps[Item, Decision, Result]) -> None:
    """Commit the transactions queued on the context, oldest first, in one database
    transaction; those queued while it runs join it, up to MAX_GROUP."""
    batch: list[_Waiting[Item, Result]] = _gather(queue)
    try:
        with transaction.atomic():
            written: list[tuple[_Waiting[Item, Result], Callable[[], Result]]] = []
            # One pipeline for the group: the row lock and every transaction's loads go out
            # together, then each transaction's writes go out while the next is decided.
            with pipeline():
                # Frozen is refused per transaction, after its idempotent replay (`decide`).
                locked = send_lock(context_id, allow_frozen=True)
                scratch = steps.begin(context_id)
                for waiting in batch:
                    steps.prefetch(scratch, waiting.item)
                context = locked()
                done = 0
                while done < len(batch):
                    for waiting in batch[done:]:
                        _decide_and_write(context, waiting, steps, scratch, written)
                    done = len(batch)
                    batch += _take(queue, MAX_GROUP - done)
                    for waiting in batch[done:]:
                        steps.prefetch(scratch, waiting.item)
            for waiting, result in written:
                waiting.result = result()
    except Exception as exc:
        # Nothing of the group was written. A group of one is the leader's own transaction:
        # its error is its answer, as alone. Otherwise each goes again on its own, in order.
        if len(batch) == 1:
            batch[0].result, batch[0].error = None, exc
        else:
            for waiting in batch:
                _commit_alone(waiting, steps)
    except BaseException:
        for waiting in batch:  # interrupted: the submitting threads go again themselves
            waiting.alone = True
        raise
    finally:
        with queue.changed:
            for waiting in batch:
                waiting.done = True
            queue.last_group = len(batch)
            queue.changed.notify_all()


def _commit_alone(waiting: _Waiting[Item, Result], steps: Steps[Item, Decision, Result]) -> None:
    waiting.result, waiting.error = None, None
    try:
        waiting.result = steps.alone(waiting.item)
    except Exception as exc:
        waiting.error = exc


def _decide_and_write(
    context: LockedContext,
    waiting: _Waiting[Item, Result],
    steps: Steps[Item, Decision, Result],
    scratch: Any,
    written: list[tuple[_Waiting[Item, Result], Callable[[], Result]]],
) -> None:
    try:
        decided = steps.decide(context, waiting.item, scratch)
    except MorphzError as exc:
        waiting.error = exc  # refused: nothing of it was written, the group goes on
        return
    if steps.finished(decided):
        waiting.result = decided  # type: ignore[assignment]
    else:
        written.append((waiting, steps.write(context, decided, scratch)))  # type: ignore[arg-type]
