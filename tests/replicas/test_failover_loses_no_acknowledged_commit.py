"""R68: with a synchronous standby (`synchronous_commit = on`, the configuration of
docs/scaling.md), every commit Morphz acknowledged survives a SIGKILL of the primary: the
promoted standby holds each one and its history replays to its stored state. The short
form of `reliability/failover.py`, on a primary of its own: a copy of the test database's
server, promoted at once, with a standby of it (no migration to wait for)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connections

from memory.contexts import create_context
from memory.models import Context, TransactionRecord
from memory.replicas import reading_from
from memory.tx.engine import submit_transaction
from memory.versions.replay import verify_context
from reliability.replication import Standby
from tests.replicas.conftest import FAILOVER, new_standby, point_alias, replica_db


def synchronous(primary: Standby, name: str) -> None:
    primary.sql(f"ALTER SYSTEM SET synchronous_standby_names = '{name}'")
    primary.sql("ALTER SYSTEM SET synchronous_commit = 'on'")
    primary.sql("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 30
    state = None
    while state != "sync":
        assert time.monotonic() < deadline, f"standby {name} never synchronous ({state})"
        time.sleep(0.02)
        state = primary.sql(
            "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'sync'"
        )


@pytest.fixture
def pair(standby: Standby) -> Iterator[tuple[Standby, Standby]]:
    servers: list[Standby] = []
    try:
        primary = new_standby("own-primary")
        servers.append(primary)
        primary.promote()
        sync = new_standby("sync", source=primary)
        servers.append(sync)
        synchronous(primary, "sync")
        point_alias(FAILOVER, primary.port)
        yield primary, sync
    finally:
        point_alias(FAILOVER, standby.port)
        for server in servers:
            server.remove()


def commit_until_lost(context_id: int, writer: int, acked: list[int]) -> None:
    """Commit on the failover primary until it is gone; each acknowledged version kept."""
    try:
        with reading_from(FAILOVER):
            for i in range(10_000):
                result = submit_transaction(
                    context_id,
                    text=f'(context-tx (reason "w{writer}") (derive w{writer}-{i} (n "{i}")))',
                    idempotency_key=f"w{writer}-{i}",
                )
                acked.append(int(result.receipt["version"]))
    except DatabaseError:
        pass  # the primary is gone: what was acknowledged is in `acked`
    finally:
        connections[FAILOVER].close()


@replica_db
def test_every_acknowledged_commit_survives_the_primarys_loss(
    pair: tuple[Standby, Standby],
) -> None:
    primary, sync = pair
    # The context is written on the copy: the test database's own server is not the
    # primary here.
    with reading_from(FAILOVER):
        context_id = create_context("drill-own").pk
    connections[FAILOVER].close()
    acked: list[int] = []
    writers = [
        threading.Thread(target=commit_until_lost, args=(context_id, w, acked)) for w in range(3)
    ]
    for t in writers:
        t.start()
    deadline = time.monotonic() + 20
    while len(acked) < 15 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(acked) >= 15
    # The standby goes away before the primary dies: asynchronous replication would go on
    # acknowledging commits the standby never gets; synchronous acknowledges none.
    sync.stop()
    time.sleep(0.5)
    primary.kill9()
    sync.start()
    for t in writers:
        t.join(30)
    sync.promote()
    point_alias(FAILOVER, sync.port)
    with reading_from(FAILOVER):
        there = Context.objects.get(pk=context_id)
        committed = set(
            TransactionRecord.objects.filter(context=there, status="committed").values_list(
                "committed_version", flat=True
            )
        )
        assert set(acked) <= committed, sorted(set(acked) - committed)
        assert verify_context(there) == []
    connections[FAILOVER].close()
