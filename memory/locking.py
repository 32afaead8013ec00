"""The context row lock, and a process-local queue in front of it.

How it works: docs/internals.md, section `memory/locking.py`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import connection

from memory.errors import ContextFrozen, NotFound
from memory.hotsql import bound_cursor
from memory.models import Context
from memory.sql import named_row, statements

_locks: dict[int, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(context_id: int) -> threading.Lock:
    lock = _locks.get(context_id)
    if lock is None:
        with _locks_guard:
            lock = _locks.setdefault(context_id, threading.Lock())
    return lock


@contextmanager
def context_gate(context_id: int) -> Iterator[None]:
    """Hold the process-local gate of a context around one database transaction.

    Inside an outer transaction the row lock outlives this call, so queueing here could
    wait on a thread that waits on us: the gate is skipped and the row lock alone decides."""
    if connection.in_atomic_block:
        yield
        return
    with _lock_for(context_id):
        yield


@dataclass
class LockedContext:
    pk: int
    slug: str
    version: int
    tick: int
    last_seq: int
    grace_ticks: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    used_tokens: int
    in_maintenance: bool
    observation_budget_tokens: int
    frozen: bool = False


def lock_context(context_id: int, *, allow_frozen: bool = False) -> LockedContext:
    """SELECT ... FOR NO KEY UPDATE the context row: serialises commits of one context (R20)
    without holding up inserts that merely reference it (a foreign key's check).

    Every write takes it, so it refuses a frozen context (R54) with ContextFrozen unless
    `allow_frozen` (freezing, unfreezing and deleting are decisions about the context)."""
    with connection.cursor() as cur:
        cur.execute(statements("memory")["lock_context"], [context_id])
        row = named_row(cur)
    return _locked(context_id, row, allow_frozen)


def send_lock(context_id: int, *, allow_frozen: bool = False) -> Callable[[], LockedContext]:
    """`lock_context` sent inside an open pipeline (`memory.tx.loader.pipeline`) without
    waiting, so statements sent after it go out in the same round trip (they run once the
    lock is granted); returns a function that reads the locked row, raising as
    `lock_context` does."""
    cur = bound_cursor()
    cur.execute(statements("memory")["lock_context"], [context_id], prepare=True)

    def read() -> LockedContext:
        with connection.wrap_database_errors, cur:
            row = named_row(cur)
        return _locked(context_id, row, allow_frozen)

    return read


def _locked(context_id: int, row: dict[str, Any] | None, allow_frozen: bool) -> LockedContext:
    if row is None:
        raise NotFound(f"context {context_id} does not exist")
    locked = LockedContext(pk=row.pop("id"), **row)
    if not allow_frozen:
        refuse_frozen(locked)
    return locked


def refuse_frozen(context: LockedContext | Context) -> None:
    """ContextFrozen when the context is frozen (R54). A write that answers an idempotent
    retry locks with `allow_frozen`, looks for its first result (which a retry gets back
    even from a frozen context: it writes nothing), then calls this before writing."""
    if context.frozen:
        raise ContextFrozen(context.slug)


def lock_context_model(context_id: int, *, allow_frozen: bool = False) -> Context:
    """`lock_context`, then the locked row as a model, for code that saves it with the ORM."""
    lock_context(context_id, allow_frozen=allow_frozen)
    return Context.objects.get(pk=context_id)
