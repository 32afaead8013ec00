"""Reads from streaming replicas with read-your-writes (R68, docs/scaling.md).

How it works: docs/internals.md, section `memory/replicas.py`."""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from memory.sql import named_row, statements

log = logging.getLogger(__name__)
T = TypeVar("T")

POLL_SECONDS = 0.005

_down_until: dict[str, float] = {}
_turn = itertools.count()


@dataclass(frozen=True)
class Floor:
    """What a replica must have replayed of one context: `version` (committed
    transactions) and `last_seq` (appended events) at least."""

    context_id: int
    version: int
    last_seq: int = 0


def configured() -> list[str]:
    """The replica aliases (`DATABASE_REPLICA_URLS`), in order; empty by default."""
    return list(settings.MORPHZ_REPLICAS)


def live_replicas(now: float | None = None) -> list[str]:
    """Configured replicas not left alone after a failure, rotated per call so the reads
    of one process spread over them."""
    now = time.monotonic() if now is None else now
    live = [alias for alias in settings.MORPHZ_REPLICAS if _down_until.get(alias, 0.0) <= now]
    if len(live) > 1:
        start = next(_turn) % len(live)
        live = live[start:] + live[:start]
    return live


def forget_failures() -> None:
    """Every replica is tried again at once (after reconfiguration, in tests)."""
    _down_until.clear()


def mark_down(alias: str, reason: BaseException | str) -> None:
    """Leave replica `alias` alone for MORPHZ_REPLICA_RETRY_SECONDS; its connection is
    dropped so the next try opens a fresh one."""
    _down_until[alias] = time.monotonic() + settings.MORPHZ_REPLICA_RETRY_SECONDS
    log.warning("replica %s left out of reads for a while: %s", alias, reason)
    with contextlib.suppress(Exception):
        connections[alias].close()


def replayed(alias: str, floor: Floor) -> bool:
    """Whether replica `alias` shows context `floor.context_id` at the floor or later
    (DatabaseError when the replica cannot be asked)."""
    with connections[alias].cursor() as cursor:
        cursor.execute(statements("memory")["replica_context_state"], [floor.context_id])
        row = named_row(cursor)
    return row is not None and row["version"] >= floor.version and row["last_seq"] >= floor.last_seq


def choose_replica(floor: Floor, wait_seconds: float | None = None) -> str | None:
    """A replica that has replayed `floor`, waiting up to `wait_seconds` (default
    MORPHZ_REPLICA_WAIT_SECONDS) for one behind; None when the primary must answer."""
    wait = settings.MORPHZ_REPLICA_WAIT_SECONDS if wait_seconds is None else wait_seconds
    deadline = time.monotonic() + wait
    candidates = live_replicas()
    while candidates:
        for alias in list(candidates):
            try:
                if replayed(alias, floor):
                    return alias
            except DatabaseError as exc:
                mark_down(alias, exc)
                candidates.remove(alias)
        if not candidates or time.monotonic() + POLL_SECONDS > deadline:
            return None
        time.sleep(POLL_SECONDS)
    return None


@contextlib.contextmanager
def reading_from(alias: str) -> Iterator[None]:
    """Within the block, this thread's default connection is replica `alias`'s."""
    primary = connections[DEFAULT_DB_ALIAS]
    connections[DEFAULT_DB_ALIAS] = connections[alias]
    try:
        yield
    finally:
        connections[DEFAULT_DB_ALIAS] = primary


class ReplicaRead:
    """One request's read on a replica: bind it, and on a failure give the read back to
    the primary (the replica is left alone for a while)."""

    def __init__(self, alias: str) -> None:
        self.alias = alias
        self._scope: contextlib.ExitStack | None = contextlib.ExitStack()
        self._scope.enter_context(reading_from(alias))

    @property
    def active(self) -> bool:
        """True while reads are bound to the replica (until `end`); needs no lock."""
        return self._scope is not None

    def end(self) -> None:
        """Unbind (idempotent): the default connection is the primary's again."""
        if self._scope is not None:
            scope, self._scope = self._scope, None
            scope.close()

    def failed(self, exc: BaseException) -> None:
        """The read failed on the replica: unbind, and leave the replica alone when it no
        longer answers (a conflict with replay or a read-only refusal only moves this one
        read to the primary)."""
        self.end()
        try:
            with connections[self.alias].cursor() as cursor:
                cursor.execute(statements("memory")["ping"])
        except DatabaseError as probe:
            mark_down(self.alias, probe)


def start_read(floor: Floor) -> ReplicaRead | None:
    """A replica read bound for `floor`, or None when the primary must answer."""
    alias = choose_replica(floor)
    return None if alias is None else ReplicaRead(alias)


def read_preferring_replica(floor: Floor, read: Callable[[], T]) -> T:
    """`read()` on a replica that has replayed `floor` when there is one (run again on the
    primary if it fails there), else on the primary. No replica configured: `read()`."""
    replica = start_read(floor) if settings.MORPHZ_REPLICAS else None
    if replica is None:
        return read()
    try:
        return read()
    except (DatabaseError, psycopg.Error) as exc:
        replica.failed(exc)
        return read()
    finally:
        replica.end()
