"""Failover drill (R68): writers commit through Morphz onto a primary with a synchronous
standby; the primary is killed with SIGKILL (postmaster and every backend at once), the
standby is promoted, Morphz is pointed at it, and the writers go on. Afterwards every
acknowledged commit must be on the new primary, nothing half-written or committed twice,
and `verify_context --all` must pass there (RELIABILITY.md, "Failover").

    .venv/bin/python -m reliability.failover [--writers 4] [--seconds 6] [--commit on]

Before the drill, `--measure S` runs the writers S seconds under each `synchronous_commit`
level (`local`: the standby follows asynchronously; `on`: a commit is acknowledged once the
standby has flushed it; `remote_apply`: once the standby has applied it, so a read there
sees it at once) and prints commits per second of each as a ratio to `local`.

Why `on` is the level of the drill: an acknowledged commit is then on the disks of two
machines, so losing either loses nothing; `remote_write` would leave it in the standby's
memory only (lost if both fail together), `local` loses the last commits on failover, and
`remote_apply` adds the standby's replay to every commit for a guarantee (visibility on the
standby) the replica floor already gives reads (`memory.replicas`).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from reliability.replication import Standby
from reliability.stack import Stack, exit_on_sigterm
from reliability.workload import Tally, check_invariants, seed, writer

SLUG = "failover"
LEVELS = ("local", "on", "remote_apply")


def set_commit_level(stack: Stack, level: str, standby_name: str | None) -> None:
    """`synchronous_commit` (and the standby it waits for) on the primary, reloaded."""
    with stack.connect() as conn:
        names = standby_name or ""
        conn.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'")
        conn.execute(f"ALTER SYSTEM SET synchronous_commit = '{level}'")
        conn.execute("SELECT pg_reload_conf()")


def wait_synchronous(stack: Stack, name: str, timeout: float = 60) -> None:
    """Until the primary lists standby `name` as its synchronous standby."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with stack.connect() as conn:
            row = conn.execute(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = %s", [name]
            ).fetchone()
        if row is not None and row[0] == "sync":
            return
        time.sleep(0.1)
    raise RuntimeError(f"standby {name} never became synchronous")


def start_writers(
    stack: Stack, token: str, count: int, first: int, tally: Tally, stop: threading.Event
) -> list[threading.Thread]:
    threads = [
        threading.Thread(
            target=writer,
            args=(stack.base, token, SLUG, first + w, 10**6, tally),
            kwargs={"stop": stop, "patience": 120.0},
        )
        for w in range(count)
    ]
    for t in threads:
        t.start()
    return threads


def stop_writers(threads: list[threading.Thread], stop: threading.Event) -> None:
    stop.set()
    for t in threads:
        t.join(180)


def measure(stack: Stack, token: str, writers: int, seconds: float) -> dict[str, Any]:
    """Commits per second under each synchronous_commit level, the same writers each time."""
    rates: dict[str, float] = {}
    for n, level in enumerate(LEVELS):
        set_commit_level(stack, level, None if level == "local" else "standby")
        tally, stop = Tally(), threading.Event()
        threads = start_writers(stack, token, writers, 1000 * (n + 1), tally, stop)
        time.sleep(seconds)
        stop_writers(threads, stop)
        rates[level] = len(tally.acks) / seconds
    return {
        "commits_per_second": {k: round(v, 1) for k, v in rates.items()},
        "ratio_to_local": {k: round(v / rates["local"], 2) for k, v in rates.items()},
    }


def drill(stack: Stack, standby: Standby, token: str, writers: int, seconds: float) -> dict:
    tally, stop = Tally(), threading.Event()
    threads = start_writers(stack, token, writers, 0, tally, stop)
    try:
        time.sleep(seconds)
        acked_before = len(tally.acks)
        killed = time.monotonic()
        stack.pg.kill9()
        standby.promote()
        promoted = time.monotonic()
        # Morphz pointed at the new primary, at the same address for the writers. The old
        # server is killed: its requests wait on a dead database, nothing to finish.
        stack.kill_server()
        stack.env["DATABASE_URL"] = standby.url()
        stack.start_server()
        served = time.monotonic()
        while len(tally.acks) == acked_before and time.monotonic() < served + 60:
            time.sleep(0.01)
        first_ack = time.monotonic()
        time.sleep(seconds)
    finally:
        stop_writers(threads, stop)
    with psycopg.connect(standby.dsn(), autocommit=True) as conn:
        problems = check_invariants(conn, SLUG, tally)
    verified = stack.manage("verify_context", "--all")
    return {
        "acknowledged": len(tally.acks),
        "acknowledged_before_kill": acked_before,
        "lost": sum("missing" in p for p in problems),
        "promote_seconds": round(promoted - killed, 2),
        "server_restart_seconds": round(served - promoted, 2),
        "kill_to_first_commit_on_new_primary_seconds": round(first_ack - killed, 2),
        "retries": tally.retries,
        "gave_up": tally.gave_up,
        "server_errors": tally.server_errors[:20],
        "problems": problems,
        "verify_context": verified.strip().splitlines(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=6.0, help="writing before the kill")
    parser.add_argument("--commit", choices=LEVELS[1:], default="on")
    parser.add_argument("--measure", type=float, default=0.0, help="seconds per level first")
    args = parser.parse_args()
    exit_on_sigterm()
    standby: Standby | None = None
    with Stack() as stack:
        try:
            token = stack.create_context(SLUG, "--capacity-tokens", "10000000")
            seed(stack.base, token, SLUG)
            standby = Standby.clone(str(stack.root), Path(stack.root) / "standby", name="standby")
            set_commit_level(stack, args.commit, "standby")
            wait_synchronous(stack, "standby")
            result: dict[str, Any] = {"synchronous_commit": args.commit}
            if args.measure:
                result["levels"] = measure(stack, token, args.writers, args.measure)
                set_commit_level(stack, args.commit, "standby")
            result.update(drill(stack, standby, token, args.writers, args.seconds))
        finally:
            if standby is not None:
                standby.stop()
    print(json.dumps(result, indent=2))
    ok = not result["problems"] and not result["server_errors"] and not result["gave_up"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
