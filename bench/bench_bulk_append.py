"""Bulk append against single appends over HTTP (R50), same run, same data.

    .venv/bin/python bench/bench_bulk_append.py            # all 300 train trajectories
    .venv/bin/python bench/bench_bulk_append.py --small    # 30 trajectories

The STATE-Bench train trajectories (../shared/benchdata/state-bench/train_trajectories) as the
events an agent would append (bench_http.trajectory_events), sent in order by one client
(morphz_client, one keep-alive connection) to a fresh context twice: once one `POST events/`
per event (`append_event`), once through the bulk path (`append_events`, `{"events": [...]}`,
--batch events per request). Prints events/s of both and their ratio (target >= 10x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_bulk")

from bench_http import load_trajectories, start_server
from common import ROOT, load_average, new_context, setup_django, stop_process, wait_ready

from morphz.devserver import free_port

sys.path.insert(0, str(ROOT / "client"))


def run(url: str, slug: str, events: list[dict[str, Any]], batch: int) -> float:
    """events/s appending `events` in order: one request per event (batch 0) or in bulk."""
    from morphz_client import MorphzClient

    token = new_context(slug)[1]
    with MorphzClient(url, token, context=slug, timeout=120) as client:
        client.context()
        start = time.perf_counter()
        if batch:
            seqs = [e["seq"] for e in client.append_events(events, batch=batch)]  # type: ignore[arg-type]
        else:
            seqs = [client.append_event(**event)["seq"] for event in events]
        elapsed = time.perf_counter() - start
    if seqs != list(range(1, len(events) + 1)):
        raise SystemExit(f"{slug}: events not appended in order")
    return len(events) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="30 trajectories")
    parser.add_argument("--batch", type=int, default=500, help="events per bulk request")
    args = parser.parse_args()
    setup_django(fresh=True)
    conversations = load_trajectories(30 if args.small else None)
    events = [event for conversation in conversations for event in conversation]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, workers=1, indexer_in_process=True)
    try:
        wait_ready(url, server)
        print(f"uvicorn on {url} (1 worker); {load_average()}")
        print(f"{len(conversations)} STATE-Bench train trajectories, {len(events)} events")
        single = run(url, "bulk-bench-single", events, batch=0)
        bulk = run(url, "bulk-bench-bulk", events, batch=args.batch)
    finally:
        stop_process(server, 10)
    print(f"single appends (one request per event): {single:.0f} events/s")
    print(f"bulk appends ({args.batch} events per request): {bulk:.0f} events/s")
    print(f"bulk/single: {bulk / single:.1f}x (target >= 10x); {load_average()}")


if __name__ == "__main__":
    main()
