"""Crash loop: writers keep committing while the server and PostgreSQL are killed with
SIGKILL in turn and started again; afterwards every acknowledged write must be there and no
transaction may be half-written (RELIABILITY.md, "Crash loop").

    .venv/bin/python -m reliability.crash [--kills 12] [--writers 8] [--interval 2.0]

Writers retry under the same idempotency key until acknowledged, so a write whose answer
was lost in a crash is either committed once or not at all, never twice.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

from reliability.stack import Stack, exit_on_sigterm
from reliability.workload import Tally, check_invariants, seed, writer


def crash_loop(
    stack: Stack, token: str, slug: str, *, kills: int, writers: int, interval: float
) -> dict[str, Any]:
    tally = Tally()
    stop = threading.Event()
    threads = [
        threading.Thread(
            target=writer,
            args=(stack.base, token, slug, w, 10**6, tally),
            kwargs={"stop": stop, "patience": 120.0},
        )
        for w in range(writers)
    ]
    for t in threads:
        t.start()
    done = {"server": 0, "postgres": 0}
    try:
        for k in range(kills):
            time.sleep(interval)
            if k % 2 == 0:
                stack.kill_server()
                done["server"] += 1
                stack.start_server()
            else:
                stack.pg.kill9()
                done["postgres"] += 1
                time.sleep(interval / 2)  # requests meet a dead database for a while
                stack.pg.start()
        time.sleep(interval)
    finally:
        stop.set()
        for t in threads:
            t.join(180)
    with stack.connect() as conn:
        problems = check_invariants(conn, slug, tally)
    return {
        "kills": done,
        "acknowledged": len(tally.acks),
        "retries": tally.retries,
        "gave_up": tally.gave_up,
        "server_errors": tally.server_errors[:20],
        "problems": problems,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--interval", type=float, default=2.0)
    args = parser.parse_args()
    exit_on_sigterm()
    with Stack() as stack:
        token = stack.create_context("crash", "--capacity-tokens", "10000000")
        seed(stack.base, token, "crash")
        result = crash_loop(
            stack, token, "crash", kills=args.kills, writers=args.writers, interval=args.interval
        )
    print(json.dumps(result, indent=2))
    return 0 if not result["problems"] and not result["server_errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
