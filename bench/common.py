"""Shared set-up for benchmark scripts: a dedicated, migrated database on the same server.

Benchmarks never touch the development data: they use the database named by
MORPHZ_BENCH_DB (default `morphz_bench`) on whichever server the settings select.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The first worked example's transaction (docs/design.md), made repeatable: `k` names its
# frames, `seq` the event it digests and retires, `base` the version it is written from.
FIRST_TX = """(context-tx
  (base-version {base})
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result-{k} (from @e{seq}) (tests passed))
  (revise release-{k} (goal ship-v1) (stage packaging))
  (relate test-result-{k} supports release-{k})
  (retire @e{seq}))"""


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


def load_average() -> str:
    """The machine's load, to print beside a figure measured on a shared machine."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


def stop_process(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Terminate a server or worker, killing it when it has not ended after `timeout` s."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_ready(url: str, server: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Wait until the server at `url` answers `/api/v1/`; RuntimeError when it exits or
    does not answer within `timeout` seconds."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"server exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/api/v1/", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("server did not answer in time")


def new_context(slug: str, capacity_tokens: int = 50_000_000) -> tuple[int, str]:
    """A benchmark context (large capacity: no pressure) and an API token for it."""
    from memory.contexts import create_context, issue_token

    context = create_context(slug, capacity_tokens=capacity_tokens)
    return context.pk, issue_token(context, name="bench").raw


class Worker(Protocol):
    def start(self) -> None: ...
    def join(self, timeout: float | None = None) -> None: ...


def timed_threads(workers: Sequence[Worker], barrier: Any) -> float:
    """Start `workers` (threads or processes), release them together (this thread is the
    barrier's last party) and return the seconds until the last one ends."""
    for worker in workers:
        worker.start()
    barrier.wait()
    began = time.perf_counter()
    for worker in workers:
        worker.join()
    return time.perf_counter() - began


def serve_checkout(
    cwd: Path, env: dict[str, str], log: Path, timeout: float = 60, *, own_group: bool = False
) -> tuple[subprocess.Popen[bytes], str]:
    """`uvicorn morphz.asgi:application` for the checkout in `cwd` on a free loopback port,
    logging to `log`, once it answers: the process and its base URL. `own_group` puts it in
    a process group of its own (a kill takes its workers too)."""
    from morphz.devserver import free_port, uvicorn_command

    port = free_port()
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            uvicorn_command(port),
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=own_group,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, proc, timeout)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc} ({cwd}): {log.read_text(errors='replace')[-2000:]}") from None
    return proc, base


def grow_history(context_id: int, events: int) -> None:
    """Add `events` retired observations to the context's history in bulk SQL (seeding, not
    the engine), then VACUUM ANALYZE."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT last_seq FROM memory_context WHERE id = %s", [context_id])
        last = cur.fetchone()[0]
        chunk = 200_000
        for start in range(0, events, chunk):
            cur.execute(
                "INSERT INTO memory_event (context_id, seq, kind, thread, content, created_at, "
                "size_chars, token_estimate, is_observation, active, status_version, pending, "
                "delivers) SELECT %s, %s + g, 'tool_result', 'main', 'old tool output ' || g, "
                "now(), 20, 8, true, false, 0, false, '{}' FROM generate_series(1, %s) AS g",
                [context_id, last + start, min(chunk, events - start)],
            )
        cur.execute(
            "UPDATE memory_context SET last_seq = last_seq + %s WHERE id = %s", [events, context_id]
        )
        # A bulk load is followed by VACUUM ANALYZE (the database's own advice): pooled
        # connections keep plans made while the tables were small, foreign-key checks
        # included (a sequential scan of a then-tiny table), until statistics change, and
        # autovacuum would otherwise do this work in the middle of a measurement.
        cur.execute("VACUUM ANALYZE")
