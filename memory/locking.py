"""A process-local queue in front of the context row lock.

Commits, appends and evaluations of one context serialise on `SELECT ... FOR UPDATE` of
the context row. When many threads of one process write to the same context, letting them
all wait inside PostgreSQL costs more than the work itself: every release wakes every
waiter, and the woken threads fight over the GIL. Threads of one process therefore queue
here first, so at most one of them waits on the row lock; other processes still meet at the
row lock, which stays the real guarantee.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

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
