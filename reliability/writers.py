"""Concurrent writers on one context, then the invariants (RELIABILITY.md, "Writers").

    .venv/bin/python -m reliability.writers [--writers 16] [--transactions 200] [--workers 1]

Runs against its own PostgreSQL and server (reliability.stack); prints the figures.
"""

from __future__ import annotations

import argparse
import json
import time

from reliability.stack import Stack, exit_on_sigterm
from reliability.workload import check_invariants, run_writers, seed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--transactions", type=int, default=200, help="per writer")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    args = parser.parse_args()
    exit_on_sigterm()
    with Stack(workers=args.workers) as stack:
        token = stack.create_context("writers", "--capacity-tokens", "10000000")
        seed(stack.base, token, "writers")
        started = time.monotonic()
        tally = run_writers(stack.base, token, "writers", args.writers, args.transactions)
        took = time.monotonic() - started
        with stack.connect() as conn:
            problems = check_invariants(conn, "writers", tally)
    result = {
        "writers": args.writers,
        "transactions_per_writer": args.transactions,
        "acknowledged": len(tally.acks),
        "conflicts_retried": tally.conflicts,
        "gave_up": tally.gave_up,
        "server_errors": len(tally.server_errors),
        "seconds": round(took, 1),
        "commits_per_second": round(len(tally.acks) / took, 1),
        "problems": problems,
    }
    print(json.dumps(result, indent=2))
    ok = not problems and not tally.server_errors and not tally.gave_up
    ok = ok and len(tally.acks) == args.writers * args.transactions
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
