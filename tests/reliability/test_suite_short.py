"""Short versions of the reliability suite (reliability/, RELIABILITY.md): concurrent writers
with invariant checks, a crash loop with real SIGKILLs of the server and of PostgreSQL, and
a soak watching resident memory. The fuzz's short version is tests/api/test_schema_properties.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection

from memory.contexts import create_context, issue_token
from morphz.devserver import database_url, free_port
from reliability.faults import start_server, stop, wait_until_serving
from reliability.workload import Ack, check_invariants, run_writers, seed


def _dsn(settings: dict[str, Any]) -> str:
    parts = {"host": settings.get("HOST") or "localhost", "dbname": settings["NAME"]}
    if settings.get("PORT"):
        parts["port"] = settings["PORT"]
    if settings.get("USER"):
        parts["user"] = settings["USER"]
    if settings.get("PASSWORD"):
        parts["password"] = settings["PASSWORD"]
    return " ".join(f"{k}={v}" for k, v in parts.items())


@pytest.fixture
def served(transactional_db: Any, tmp_path: Any) -> Iterator[dict[str, Any]]:
    """A real server process on the test database, and a token for a fresh context."""
    context = create_context("rel", capacity_tokens=100_000_000)
    token = issue_token(context).raw
    port = free_port()
    env = {
        "DATABASE_URL": database_url(connection.settings_dict),
        "MORPHZ_THROTTLE_RATE": "100000000/min",
    }
    proc = start_server(port, env, log=tmp_path / "server.log")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, proc)
        with psycopg.connect(_dsn(connection.settings_dict), autocommit=True) as conn:
            yield {"base": base, "token": token, "proc": proc, "conn": conn}
    finally:
        stop(proc)


@pytest.mark.slow
def test_concurrent_writers_lose_nothing_and_keep_every_invariant(served: dict[str, Any]) -> None:
    seed(served["base"], served["token"], "rel")
    tally = run_writers(served["base"], served["token"], "rel", writers=6, per_writer=8)
    assert len(tally.acks) == 48
    assert not tally.server_errors
    assert check_invariants(served["conn"], "rel", tally) == []
    assert tally.conflicts > 0  # they did collide on the shared frames


def test_the_invariant_check_sees_a_lost_write(served: dict[str, Any]) -> None:
    """The checker is not vacuous: an acknowledged write that is not there is reported."""
    seed(served["base"], served["token"], "rel")
    tally = run_writers(served["base"], served["token"], "rel", writers=1, per_writer=2)
    tally.acks.append(Ack("never-sent", 99, 12345, "ghost", "shared-0"))
    problems = check_invariants(served["conn"], "rel", tally)
    assert problems == ["acknowledged never-sent (version 99) is missing"]


@pytest.mark.slow
def test_soak_keeps_resident_memory_near_its_steady_state(served: dict[str, Any]) -> None:
    from reliability.soak import prepare, rss_mb, soak

    prepare(served["base"], served["token"], "rel", body_mb=1.0)

    class Served:  # the part of reliability.stack.Stack that soak() uses
        base = served["base"]
        server = served["proc"]

    result = soak(Served(), served["token"], "rel", rounds=25, warmup=5)  # type: ignore[arg-type]
    assert result["server_errors"] == {}
    assert result["end_over_steady"] <= 2.0, result
    assert rss_mb(served["proc"].pid) > 0


@pytest.mark.slow
def test_crash_loop_loses_no_acknowledged_write() -> None:
    """Its own PostgreSQL (killed with SIGKILL, all backends at once) and server."""
    from reliability.crash import crash_loop
    from reliability.stack import Stack

    with Stack() as stack:
        token = stack.create_context("crash", "--capacity-tokens", "10000000")
        seed(stack.base, token, "crash")
        result = crash_loop(stack, token, "crash", kills=2, writers=3, interval=1.5)
    assert result["kills"] == {"server": 1, "postgres": 1}
    assert result["problems"] == []
    assert result["server_errors"] == []
    assert result["acknowledged"] > 0
