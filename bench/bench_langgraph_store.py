"""MorphzStore against LangGraph's own PostgresStore, on the same PostgreSQL server (R67).

    .venv/bin/python bench/bench_langgraph_store.py            # 1,000 and 10,000 items
    .venv/bin/python bench/bench_langgraph_store.py --small    # 100 and 300 items, a smoke run

For each size N, both stores are filled with N items (in batches: one transaction per 240
items for MorphzStore, one `batch` call per 240 for PostgresStore) in 10 namespaces, then
measured from one client each, one operation at a time:

- put: `store.put` replacing an existing item (random keys), `--samples` times;
- get: `store.get` of an existing item (random keys);
- search: `store.search(namespace, filter={"n": ...}, limit=10)` in one namespace.

MorphzStore talks HTTP to `uvicorn morphz.asgi:application` (one worker, the search indexer off:
these operations do not use it) on the benchmark database (bench/common.py;
MORPHZ_BENCH_DB, default `morphz_bench_langgraph`); PostgresStore connects to its own database
(`<bench db>_pg`) on the same server, in this process. Prints p50 in ms and the ratio
MorphzStore / PostgresStore per operation and size, with the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_langgraph")

from common import (
    ROOT,
    load_average,
    new_context,
    percentile,
    setup_django,
    stop_process,
    wait_ready,
)

from morphz.devserver import free_port, uvicorn_command

sys.path.insert(0, str(ROOT / "client"))

NAMESPACES = 10
FILL_BATCH = 240


def p50_ms(fn: Callable[[int], Any], samples: int) -> float:
    times = []
    for i in range(samples):
        started = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 50)


def fill(store: Any, n: int) -> None:
    from langgraph.store.base import PutOp

    ops = [
        PutOp(("bench", f"ns{i % NAMESPACES}"), f"key-{i}", {"n": i % 50, "text": f"item {i}"})
        for i in range(n)
    ]
    for start in range(0, n, FILL_BATCH):
        store.batch(ops[start : start + FILL_BATCH])


def measure(store: Any, n: int, samples: int, search_samples: int) -> dict[str, float]:
    rng = random.Random(n)
    keys = [rng.randrange(n) for _ in range(samples)]

    def put(i: int) -> None:
        k = keys[i]
        ns = ("bench", f"ns{k % NAMESPACES}")
        store.put(ns, f"key-{k}", {"n": k % 50, "text": f"item {k} v{i}"})

    def get(i: int) -> None:
        k = keys[i]
        assert store.get(("bench", f"ns{k % NAMESPACES}"), f"key-{k}") is not None

    def search(i: int) -> None:
        found = store.search(("bench", f"ns{i % NAMESPACES}"), filter={"n": i % 50}, limit=10)
        assert found

    return {
        "put": p50_ms(put, samples),
        "get": p50_ms(get, samples),
        "search": p50_ms(search, search_samples),
    }


def postgres_url(n: int) -> str:
    """A fresh database for the PostgresStore of size `n`, on the benchmark's server."""
    import psycopg

    url = os.environ["DATABASE_URL"]
    bench_db = os.environ["MORPHZ_BENCH_DB"]
    pg_db = f"{bench_db}_pg_{n}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{pg_db}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{pg_db}"')
    return url.replace(f"/{bench_db}", f"/{pg_db}", 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--search-samples", type=int, default=20)
    args = parser.parse_args()
    sizes = (100, 300) if args.small else (1000, 10_000)
    samples = 50 if args.small else args.samples
    search_samples = 10 if args.small else args.search_samples

    setup_django(fresh=True)
    from langgraph.store.postgres import PostgresStore
    from morphz_client import MorphzClient
    from morphz_client.langgraph import MorphzStore

    port = free_port()
    env = {
        **os.environ,
        "MORPHZ_THROTTLE_RATE": "100000000/min",
        "MORPHZ_INDEXER_IN_PROCESS": "0",
        "LOG_LEVEL": "WARNING",
    }
    server = subprocess.Popen(uvicorn_command(port, workers=1), cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    rows = []
    try:
        wait_ready(url, server)
        for n in sizes:
            _ctx, token = new_context(f"lg-bench-{n}")
            with (
                PostgresStore.from_conn_string(postgres_url(n)) as pg,
                MorphzClient(url, token) as mz,
            ):
                pg.setup()
                ours = MorphzStore(mz)
                fill(ours, n)
                fill(pg, n)
                theirs = measure(pg, n, samples, search_samples)
                mine = measure(ours, n, samples, search_samples)
                # The floor of any Morphz call: one authenticated API read (GET the context).
                mine["api floor"] = p50_ms(lambda _i: mz.context(), samples)
                theirs["api floor"] = float("nan")
            rows.append((n, mine, theirs))
    finally:
        stop_process(server)
    print(f"# MorphzStore vs PostgresStore, p50 ms ({load_average()})")
    print("| items | operation | MorphzStore | PostgresStore | ratio |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for n, mine, theirs in rows:
        for op in ("put", "get", "search"):
            ratio = mine[op] / theirs[op]
            print(f"| {n:,} | {op} | {mine[op]:.2f} | {theirs[op]:.2f} | {ratio:.1f}x |")
        print(f"| {n:,} | one API read (floor) | {mine['api floor']:.2f} | | |")


if __name__ == "__main__":
    main()
