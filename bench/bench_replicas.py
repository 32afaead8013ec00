"""Read replicas measured as ratios in one run (R68, docs/scaling.md).

    .venv/bin/python bench/bench_replicas.py [--samples 200] [--seconds 8] [--readers 4]

Brings up its own primary (reliability.stack: a fresh PostgreSQL from pgserver's binaries,
migrated) and a hot standby streaming from it on loopback (reliability.replication), and
two servers in front: `primary` (no replica configured: the single-server path) and
`replica` (DATABASE_REPLICA_URLS naming the standby). One context holds 200 frames and 200
events. Printed, each against its baseline in the same run:

- read p50, replica / primary: one frame read (GET frames/{id}/) and one search, sent in
  turn to the two servers over keep-alive HTTP;
- replica lag under the reliability writers (4 threads committing on one context through a
  third server of their own): the standby's `replay_lag` as the primary reports it, p50 and max, and
  the same reads' p50 on each server while the writers run;
- read throughput: `--readers` threads reading frames for `--seconds` through each server
  in turn: reads/s with the replica / without.

On a 2-core machine every process (both PostgreSQL servers, the servers, the clients)
shares the same two cores: a replica here adds work and cannot add capacity, so these
figures show the overhead of the replica path, not scale.
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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from common import serve_checkout  # noqa: E402

from reliability.replication import Standby  # noqa: E402
from reliability.stack import Stack, exit_on_sigterm  # noqa: E402
from reliability.workload import Tally, seed, writer  # noqa: E402

SLUG = "replicas"
FRAMES = 200


def fill(base: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    url = f"{base}/api/v1/contexts/{SLUG}/"
    for start in range(0, FRAMES, 50):
        ops = [
            {"op": "derive", "id": f"f{i}", "body": {"text": f"frame {i} about topic {i % 7}"}}
            for i in range(start, start + 50)
        ]
        httpx.post(url + "transactions/", json={"ops": ops}, headers=headers, timeout=60)
    events = [{"kind": "tool_result", "content": f"result {i} topic {i % 7}"} for i in range(200)]
    httpx.post(url + "events/", json={"events": events}, headers=headers, timeout=60)


def reads(client: httpx.Client, base: str, n: int) -> tuple[list[float], list[float]]:
    """`n` frame reads and `n` searches: their times in ms."""
    url = f"{base}/api/v1/contexts/{SLUG}/"
    frame_ms, search_ms = [], []
    for i in range(n):
        started = time.perf_counter()
        response = client.get(f"{url}frames/f{i % FRAMES}/")
        frame_ms.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
        started = time.perf_counter()
        response = client.get(f"{url}search/", params={"q": f"topic {i % 7}"})
        search_ms.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return frame_ms, search_ms


def in_turn(clients: dict[str, httpx.Client], bases: dict[str, str], samples: int) -> dict:
    """Blocks of 10 reads alternating between the servers: p50 of each, in ms."""
    times: dict[str, dict[str, list[float]]] = {k: {"frame": [], "search": []} for k in bases}
    for _ in range(max(1, samples // 10)):
        for name, base in bases.items():
            frame_ms, search_ms = reads(clients[name], base, 10)
            times[name]["frame"] += frame_ms
            times[name]["search"] += search_ms
    return {
        name: {kind: statistics.median(values) for kind, values in kinds.items()}
        for name, kinds in times.items()
    }


def throughput(base: str, token: str, readers: int, seconds: float) -> float:
    count = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def read() -> None:
        done = 0
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            url = f"{base}/api/v1/contexts/{SLUG}/frames/"
            while time.monotonic() < stop:
                assert client.get(f"{url}f{done % FRAMES}/").status_code == 200
                done += 1
        with lock:
            count[0] += done

    threads = [threading.Thread(target=read) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return count[0] / seconds


def lag_samples(stack: Stack, stop: threading.Event, out: list[float]) -> None:
    with stack.connect() as conn:
        while not stop.is_set():
            row = conn.execute(
                "SELECT extract(epoch FROM replay_lag) FROM pg_stat_replication"
            ).fetchone()
            if row is not None and row[0] is not None:
                out.append(float(row[0]) * 1000)
            time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--readers", type=int, default=4)
    args = parser.parse_args()
    exit_on_sigterm()
    result: dict[str, Any] = {"load_before": os.getloadavg()}
    servers: list[subprocess.Popen[bytes]] = []
    standby: Standby | None = None
    with Stack() as stack:
        try:
            token = stack.create_context(SLUG, "--capacity-tokens", "100000000")
            fill(stack.base, token)
            seed(stack.base, token, SLUG)
            standby = Standby.clone(str(stack.root), stack.root / "standby", name="standby")
            # Two servers of our own below for the reads; the writers go through the
            # stack's own, so neither read server shares its process with the commits.
            primary, primary_base = serve_checkout(
                ROOT, dict(stack.env), stack.root / "primary.log", own_group=True
            )
            env = {**stack.env, "DATABASE_REPLICA_URLS": standby.url()}
            replica, replica_base = serve_checkout(
                ROOT, env, stack.root / "replica.log", own_group=True
            )
            servers += [primary, replica]
            bases = {"primary": primary_base, "replica": replica_base}
            headers = {"Authorization": f"Bearer {token}"}
            clients = {k: httpx.Client(headers=headers, timeout=30) for k in bases}
            in_turn(clients, bases, 40)  # warm-up
            quiet = in_turn(clients, bases, args.samples)
            result["read_p50_ms"] = quiet
            result["replica_over_primary_p50"] = {
                kind: round(quiet["replica"][kind] / quiet["primary"][kind], 2)
                for kind in ("frame", "search")
            }
            # Under the writers: lag and the same reads.
            tally, stop = Tally(), threading.Event()
            lags: list[float] = []
            threads = [
                threading.Thread(
                    target=writer,
                    args=(stack.base, token, SLUG, w, 10**6, tally),
                    kwargs={"stop": stop},
                )
                for w in range(4)
            ] + [threading.Thread(target=lag_samples, args=(stack, stop, lags))]
            for t in threads:
                t.start()
            try:
                time.sleep(1.0)
                busy = in_turn(clients, bases, args.samples // 2)
            finally:
                stop.set()
                for t in threads:
                    t.join(60)
            result["under_writers"] = {
                "commits": len(tally.acks),
                "replay_lag_ms_p50": round(statistics.median(lags), 2) if lags else None,
                "replay_lag_ms_max": round(max(lags), 2) if lags else None,
                "read_p50_ms": busy,
                "replica_over_primary_p50": {
                    kind: round(busy["replica"][kind] / busy["primary"][kind], 2)
                    for kind in ("frame", "search")
                },
            }
            rates: dict[str, float] = {}
            for name in ("primary", "replica", "primary", "replica"):
                rate = throughput(bases[name], token, args.readers, args.seconds / 2)
                rates[name] = rates.get(name, 0.0) + rate / 2
            result["reads_per_second"] = {k: round(v, 1) for k, v in rates.items()}
            result["throughput_with_over_without_replica"] = round(
                rates["replica"] / rates["primary"], 2
            )
            for client in clients.values():
                client.close()
        finally:
            for proc in servers:
                proc.terminate()
                proc.wait(20)
            if standby is not None:
                standby.stop()
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
