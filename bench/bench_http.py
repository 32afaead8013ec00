"""HTTP benchmark: the REST API served by uvicorn, measured from real clients.

    .venv/bin/python bench/bench_http.py            # full run
    .venv/bin/python bench/bench_http.py --small    # quick smoke run

Starts `uvicorn morphz.asgi:application` on a free loopback port against the benchmark
database (bench/common.py; MORPHZ_BENCH_DB, default `morphz_bench_http` here) and prints:

- commit p50/p99 over one keep-alive HTTP connection: the first worked example's transaction (docs/design.md)
  (derive, revise, relate, retire a 200-line log), each on fresh targets (context: its ratio to in-process is the scaling table's);
- STATE-Bench train trajectories (../shared/benchdata/state-bench/train_trajectories, 300
  conversations) appended through the API by 4 parallel keep-alive clients, each
  conversation on its own thread: events/s into one shared context (every append takes that
  context's row lock) and into one context per client (context: the bulk against single
  appends ratio is the scaling table's).

Throttling is lifted for the server it starts (MORPHZ_THROTTLE_RATE): the limit is policy, not
cost (the throttle still runs on every request). By default the server runs 2 uvicorn workers
(--workers) with the in-process search indexer off, and the indexer runs beside it as its own
process (`manage.py run_indexer`), indexing everything the benchmark writes, on the same
cores and database; `--indexer in-process` measures the single-process set-up instead. The
load average is printed with the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_http")

from common import (
    FIRST_TX,
    ROOT,
    describe,
    load_average,
    new_context,
    percentile,
    prepare_targets,
    setup_django,
    stop_process,
    timed_threads,
    wait_ready,
)

from morphz.devserver import free_port, uvicorn_command

DATA = ROOT.parent / "shared" / "benchdata" / "state-bench" / "train_trajectories"
CLIENTS = 4


def start_server(port: int, workers: int, indexer_in_process: bool) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "MORPHZ_THROTTLE_RATE": "100000000/min",
        "MORPHZ_INDEXER_IN_PROCESS": "1" if indexer_in_process else "0",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "morphz.settings"),
    }
    return subprocess.Popen(uvicorn_command(port, workers=workers), cwd=ROOT, env=env)


def start_indexer() -> subprocess.Popen[bytes]:
    """`manage.py run_indexer` on the benchmark database (DATABASE_URL set by setup_django)."""
    command = [sys.executable, "manage.py", "run_indexer", "--poll", "0.2"]
    return subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL)


def bench_commits(url: str, n: int) -> list[float]:
    """Commit latency over one keep-alive connection, on targets prepared in-process."""
    import httpx

    context_id, token = new_context("http-commits")
    targets = prepare_targets(context_id, "", n)
    headers = {"Authorization": f"Bearer {token}"}
    samples = []
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        base = client.get("/api/v1/contexts/http-commits/").json()["version"]
        for _ in range(20):  # warm the connection and the server's code paths
            client.get("/api/v1/contexts/http-commits/")
        for k, seq in targets:
            body = {"text": FIRST_TX.format(base=base, k=k, seq=seq)}
            began = time.perf_counter()
            response = client.post("/api/v1/contexts/http-commits/transactions/", json=body)
            samples.append((time.perf_counter() - began) * 1000)
            if response.status_code != 201:
                raise SystemExit(f"commit failed: {response.status_code} {response.text[:300]}")
            base = int(response.json()["version"])
    return samples


def trajectory_events(path: Path) -> list[dict[str, Any]]:
    """One conversation as the events an agent would append, in order."""
    thread = f"{path.parent.name}.{path.stem}"[:100]
    thread = "".join(c if c.isalnum() or c in "._:-" else "-" for c in thread)
    events: list[dict[str, Any]] = []
    for message in json.loads(path.read_text())["conversation"]:
        role, content = message.get("role"), message.get("content") or ""
        if role == "system":
            events.append({"kind": "external_fact", "content": content, "thread": thread})
        elif role == "user":
            events.append({"kind": "user_message", "content": content, "thread": thread})
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                events.append(
                    {
                        "kind": "tool_result",
                        "content": json.dumps(call.get("result"), ensure_ascii=False),
                        "payload": {"tool": call.get("name"), "arguments": call.get("arguments")},
                        "thread": thread,
                    }
                )
            if content:
                events.append({"kind": "agent_message", "content": content, "thread": thread})
    return events


def load_trajectories(limit: int | None) -> list[list[dict[str, Any]]]:
    files = sorted(DATA.glob("*/*.json"))
    if limit is not None:
        files = files[:limit]
    return [trajectory_events(f) for f in files]


def bench_append(
    url: str, conversations: list[list[dict[str, Any]]], shared: bool
) -> tuple[float, int, list[float]]:
    """events/s with CLIENTS parallel keep-alive clients; returns (rate, events, latencies)."""
    import httpx

    slugs = ["http-events"] if shared else [f"http-events-{i}" for i in range(CLIENTS)]
    tokens = {slug: new_context(slug)[1] for slug in slugs}
    shares: list[list[list[dict[str, Any]]]] = [conversations[i::CLIENTS] for i in range(CLIENTS)]
    latencies: list[list[float]] = [[] for _ in range(CLIENTS)]
    errors: list[str] = []
    barrier = threading.Barrier(CLIENTS + 1)

    def client_loop(index: int) -> None:
        slug = slugs[0] if shared else slugs[index]
        headers = {"Authorization": f"Bearer {tokens[slug]}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            client.get(f"/api/v1/contexts/{slug}/")
            barrier.wait()
            for conversation in shares[index]:
                for event in conversation:
                    start = time.perf_counter()
                    response = client.post(f"/api/v1/contexts/{slug}/events/", json=event)
                    latencies[index].append((time.perf_counter() - start) * 1000)
                    if response.status_code != 201:
                        errors.append(f"{response.status_code} {response.text[:200]}")
                        return

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(CLIENTS)]
    elapsed = timed_threads(threads, barrier)
    if errors:
        raise SystemExit(f"append failed: {errors[0]}")
    total = sum(len(c) for c in conversations)
    return total / elapsed, total, [x for part in latencies for x in part]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="quick smoke run")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument(
        "--indexer",
        choices=["process", "in-process"],
        default="process",
        help="search indexer as its own process (default) or as a thread in each worker",
    )
    args = parser.parse_args()
    in_process = args.indexer == "in-process"
    commits = 50 if args.small else 500
    files = 20 if args.small else None

    setup_django(fresh=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, args.workers, in_process)
    indexer = None if in_process else start_indexer()
    try:
        wait_ready(url, server)
        print(
            f"uvicorn on {url} ({args.workers} worker(s), indexer {args.indexer}), "
            f"database {os.environ['MORPHZ_BENCH_DB']}; {load_average()}"
        )
        samples = bench_commits(url, commits)
        print(describe("HTTP commit (first worked example, keep-alive)", samples))
        conversations = load_trajectories(files)
        chars = sum(len(e["content"]) for c in conversations for e in c)
        print(
            f"STATE-Bench train trajectories: {len(conversations)} conversations, "
            f"{sum(len(c) for c in conversations)} events, {chars:,} characters"
        )
        for shared in (True, False):
            rate, total, lat = bench_append(url, conversations, shared)
            where = "one shared context" if shared else f"{CLIENTS} contexts (one per client)"
            print(
                f"HTTP append, {CLIENTS} parallel clients, {where}: {rate:.0f} events/s "
                f"({total} events; per request p50 {statistics.median(lat):.2f} ms, "
                f"p99 {percentile(lat, 99):.2f} ms)"
            )
        from memory.models import IndexIntent

        backlog = IndexIntent.objects.count()
        print(f"after the run: {load_average()}; search index backlog {backlog} intents")
    finally:
        stop_process(server, 10)
        if indexer is not None:
            stop_process(indexer, 10)


if __name__ == "__main__":
    main()
