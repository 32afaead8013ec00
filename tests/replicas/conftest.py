"""Replica tests on real servers (R68): the test database's own PostgreSQL is the primary,
and a hot standby streams from it on loopback (`reliability.replication.Standby`), one per
session. A test that uses the `replica` fixture has Morphz configured with that standby as
its one replica (`replica_0`); its writes commit (transactional tests), so the standby sees
them as any replica would.

Skipped only on a machine with no PostgreSQL binaries at all (neither the embedded server's
nor the system's), saying so.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connections

from memory import replicas
from reliability.replication import Standby, binaries

ALIAS = "replica_0"
# A primary of its own for the failover test (a copy of the test database's server).
FAILOVER = "failover_primary"
# Every test in this folder reads from the replica alias as well as the primary.
replica_db = pytest.mark.django_db(transaction=True, databases=["default", ALIAS, FAILOVER])


def primary_settings() -> dict[str, Any]:
    return dict(connections.settings["default"])


def primary_lsn() -> str:
    primary = primary_settings()
    conn = psycopg.connect(
        host=primary["HOST"],
        port=primary["PORT"] or 5432,
        user=primary["USER"] or "postgres",
        dbname=primary["NAME"],
        autocommit=True,
    )
    with conn:
        row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    return str(row[0])


def new_standby(name: str, source: Standby | None = None) -> Standby:
    bin_dir = binaries()
    if bin_dir is None and os.environ.get("CI") == "true":
        pytest.fail("CI must run the replica tests: no PostgreSQL binaries found")
    if bin_dir is None:
        pytest.skip(
            "no PostgreSQL binaries: neither pgserver's (pginstall/bin) nor the machine's "
            "(/usr/lib/postgresql/*/bin) are installed"
        )
    primary = primary_settings()
    host, port = primary["HOST"] or "127.0.0.1", str(primary["PORT"] or "")
    if source is not None:  # a standby of that server instead of the test database's
        host, port = "127.0.0.1", str(source.port)
    root = Path(tempfile.mkdtemp(prefix=f"mz-{name}-", dir="/tmp"))
    try:
        return Standby.clone(
            host,
            root,
            primary_port=port,
            bin_dir=bin_dir,
            name=name,
            durable=False,
        )
    except Exception:
        shutil.rmtree(root, ignore_errors=True)
        raise


@pytest.fixture(scope="session")
def standby(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Standby]:
    """The session's standby of the test database's server (made after the test
    database exists, so it holds it)."""
    server = new_standby("standby")
    # The aliases exist before any test names them in its databases.
    use_replica(server)
    point_alias(FAILOVER, server.port)
    settings.MORPHZ_REPLICAS = []
    yield server
    drop_replica()
    server.remove()


def point_alias(alias: str, port: int, user: str | None = None) -> None:
    """Database alias `alias`: the test database on the server at 127.0.0.1:`port`
    (connecting as `user` when given), its old connections and pool closed."""
    config = copy.deepcopy(primary_settings())
    config.update({"HOST": "127.0.0.1", "PORT": str(port)})
    if user is not None:
        config["USER"] = user
    # A mirror: the test runner flushes the primary only (a standby refuses writes).
    config["TEST"] = {**config.get("TEST", {}), "MIRROR": "default"}
    if alias in connections.settings:
        connections[alias].close()
        if getattr(connections[alias], "pool", None) is not None:
            connections[alias].close_pool()
    connections.settings[alias] = config
    settings.DATABASES[alias] = config
    if hasattr(connections._connections, alias):
        delattr(connections._connections, alias)


def use_replica(server: Standby, user: str | None = None) -> None:
    """Morphz configured with `server` as its one replica, `replica_0` (connecting as
    `user` when given)."""
    point_alias(ALIAS, server.port, user)
    settings.MORPHZ_REPLICAS = [ALIAS]
    replicas.forget_failures()


def drop_replica() -> None:
    settings.MORPHZ_REPLICAS = []
    if ALIAS in connections.settings:
        connections[ALIAS].close()
    replicas.forget_failures()


@pytest.fixture
def replica(standby: Standby) -> Iterator[Standby]:
    """Morphz reads from the session's standby for this test (replay resumed, running)."""
    if standby.proc is None:
        standby.start()
    use_replica(standby)
    yield standby
    if standby.proc is None:
        standby.start()
    if standby.sql("SELECT pg_is_wal_replay_paused()"):
        standby.resume_replay()
    drop_replica()
