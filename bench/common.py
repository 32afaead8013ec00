"""Shared set-up for benchmark scripts: a dedicated, migrated database on the same server.

Benchmarks never touch the development data: they use the database named by
MORPHZ_BENCH_DB (default `morphz_bench`) on whichever server the settings select.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup_django(fresh: bool = True) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    from morphz.config import database_config
    from morphz.embedded_db import ensure_database

    ensure_database()
    config = database_config()
    bench_db = os.environ.get("MORPHZ_BENCH_DB", "morphz_bench")
    import psycopg

    admin = psycopg.connect(
        dbname=config.name,
        user=config.user,
        password=config.password or None,
        host=config.host or None,
        port=config.port or None,
        autocommit=True,
    )
    if fresh:
        admin.execute(f'DROP DATABASE IF EXISTS "{bench_db}" WITH (FORCE)')
    exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [bench_db]).fetchone()
    if not exists:
        admin.execute(f'CREATE DATABASE "{bench_db}"')
    admin.close()
    host = f"?host={config.host}" if config.host.startswith("/") else ""
    netloc = config.host if not config.host.startswith("/") else ""
    port = f":{config.port}" if config.port else ""
    auth = config.user + (f":{config.password}" if config.password else "")
    os.environ["DATABASE_URL"] = f"postgresql://{auth}@{netloc}{port}/{bench_db}{host}"
    import django

    django.setup()
    from django.core.management import call_command

    if fresh:
        call_command("migrate", verbosity=0)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def describe(name: str, samples_ms: list[float]) -> str:
    return (
        f"{name}: p50 {statistics.median(samples_ms):.2f} ms, p99 {percentile(samples_ms, 99):.2f} ms "
        f"(n={len(samples_ms)})"
    )


def prepare_targets(context_id: int, prefix: str, count: int) -> list[tuple[int, int]]:
    """`release-<k>` frames and one long log each; returns (k, log seq) pairs."""
    from memory.timeline.events import append_event
    from memory.tx.engine import submit_transaction

    ops = [
        {
            "op": "derive",
            "id": f"release-{prefix}{k}",
            "from": [],
            "body": {"goal": "ship-v1", "stage": "waiting"},
        }
        for k in range(count)
    ]
    for start in range(0, count, 250):
        submit_transaction(
            context_id,
            data={"base_version": None, "reason": "targets", "ops": ops[start : start + 250]},
        )
    log = "\n".join(f"test_{n:04d} ... ok" for n in range(200))
    pairs = []
    for k in range(count):
        seq = append_event(context_id, kind="tool_result", content=log).event.seq
        pairs.append((k, seq))
    return pairs
