"""Engine benchmark: commit latency against hand-written SQL, throughput, compile.

    .venv/bin/python bench/bench_engine.py            # full run (100,000 frames, 1M events)
    .venv/bin/python bench/bench_engine.py --small    # quick smoke run

Prints figures as context, beside the ratio to hand-written SQL (target <= 1.5); the
ratios that are targets (throughput against PostgreSQL alone, compile against plain
queries and flat in history size) are the scaling table's (bench/run_all.py).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from common import (
    FIRST_TX,
    describe,
    grow_history,
    prepare_targets,
    setup_django,
    timed,
    timed_threads,
)


def seed_frames(context_id: int, count: int, batch: int = 250) -> None:
    from memory.tx.engine import submit_transaction

    for start in range(0, count, batch):
        ops = [
            {
                "op": "derive",
                "id": f"seed-{i}",
                "from": [],
                "body": {"n": str(i), "note": "seeded frame"},
            }
            for i in range(start, min(count, start + batch))
        ]
        submit_transaction(context_id, data={"base_version": None, "reason": "seed", "ops": ops})


def bench_commit_latency(context_id: int, n: int) -> list[float]:
    from memory.models import Context
    from memory.tx.engine import submit_transaction

    pairs = prepare_targets(context_id, "l", n)
    samples = []
    for k, seq in pairs:
        base = Context.objects.values_list("version", flat=True).get(pk=context_id)
        text = FIRST_TX.format(base=base, k=f"l{k}", seq=seq)
        start = time.perf_counter()
        submit_transaction(context_id, text=text)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


class HandwrittenCommits:
    """The same rows the engine writes for the first example, in one psycopg transaction
    each, on a connection of its own: `commit(i)` writes the i-th and returns its ms."""

    def __init__(self, context_id: int, n: int, prefix: str = "h") -> None:
        import psycopg
        from django.db import connection

        self.context_id, self.prefix = context_id, prefix
        self.pairs = prepare_targets(context_id, prefix, n)
        params = connection.get_connection_params()
        self.conn = psycopg.connect(
            **{k: v for k, v in params.items() if k != "cursor_factory"}, autocommit=False
        )

    def close(self) -> None:
        self.conn.close()

    def commit(self, i: int) -> float:
        k, seq = self.pairs[i]
        start = time.perf_counter()
        with self.conn.cursor() as cur:
            # as the engine's commit does, so both plan foreign-key checks alike
            cur.execute("SET LOCAL enable_seqscan = off")
            state = self._read(cur, k, seq)
            self._write(cur, k, seq, *state)
        self.conn.commit()
        return (time.perf_counter() - start) * 1000

    def _read(self, cur: Any, k: int, seq: int) -> tuple[int, int, int, int, int, int]:
        """The locked context's counters, the release frame's id, the log event's id and
        tokens, each by its own statement (one round trip each)."""
        context_id, prefix = self.context_id, self.prefix
        cur.execute(
            "SELECT version, tick, last_seq, used_tokens FROM memory_context WHERE id = %s FOR NO KEY UPDATE",
            [context_id],
        )
        version, _tick, last_seq, used = cur.fetchone()
        cur.execute(
            "SELECT id, frame_id, revision, sources, changed_version FROM memory_frame "
            "WHERE context_id = %s AND frame_id = ANY(%s)",
            [context_id, [f"release-{prefix}{k}", f"test-result-{prefix}{k}"]],
        )
        release_pk = cur.fetchone()[0]
        cur.execute(
            "SELECT id, active, token_estimate FROM memory_event WHERE context_id = %s AND seq = %s",
            [context_id, seq],
        )
        event_pk, _, event_tokens = cur.fetchone()
        return version, last_seq, used, release_pk, event_pk, event_tokens

    def _write(
        self,
        cur: Any,
        k: int,
        seq: int,
        version: int,
        last_seq: int,
        used: int,
        release_pk: int,
        event_pk: int,
        event_tokens: int,
    ) -> None:
        """The first example's rows, one statement per round trip."""
        import json

        context_id, prefix = self.context_id, self.prefix
        text = FIRST_TX.format(base=0, k=f"{prefix}{k}", seq=seq)
        new_version = version + 1
        cur.execute(
            "INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at, size_chars, "
            "token_estimate, is_observation, active, status_version, pending, delivers) VALUES "
            "(%s, %s, 'transaction', 'main', %s, %s, now(), %s, 0, false, false, 0, false, '{}') RETURNING id",
            [context_id, last_seq + 1, text, json.dumps({"version": new_version}), len(text)],
        )
        tx_event = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, base_version, "
            "committed_version, status, reason, text, ops, receipt, frame_ids, event_id, created_at) VALUES "
            "(%s, 'bench', 'agent', 'main', %s, %s, 'committed', %s, %s, %s, %s, %s, %s, now()) RETURNING id",
            [
                context_id,
                version,
                new_version,
                "r",
                text,
                "[]",
                json.dumps({"version": new_version}),
                [f"release-{prefix}{k}", f"test-result-{prefix}{k}"],
                tx_event,
            ],
        )
        record = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, protected, "
            "retire_generation, token_estimate, created_version, changed_version, updated_at) VALUES "
            "(%s, %s, 1, %s, %s, 'active', false, 0, 10, %s, %s, now()) RETURNING id",
            [
                context_id,
                f"test-result-{prefix}{k}",
                '{"tests":"passed"}',
                json.dumps([f"@e{seq}"]),
                new_version,
                new_version,
            ],
        )
        derived_pk = cur.fetchone()[0]
        cur.execute(
            "UPDATE memory_frame SET revision = revision + 1, body = %s, changed_version = %s, updated_at = now() "
            "WHERE id = %s",
            ['{"goal":"ship-v1","stage":"packaging"}', new_version, release_pk],
        )
        cur.executemany(
            "INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id, version, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, now())",
            [
                (derived_pk, 1, '{"tests":"passed"}', "[]", record, new_version),
                (
                    release_pk,
                    2,
                    '{"goal":"ship-v1","stage":"packaging"}',
                    "[]",
                    record,
                    new_version,
                ),
            ],
        )
        cur.execute(
            "INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version) "
            "VALUES (%s, %s, 'supports', %s, %s)",
            [context_id, derived_pk, release_pk, new_version],
        )
        cur.execute(
            "UPDATE memory_event SET active = false, status_version = %s WHERE id = %s",
            [new_version, event_pk],
        )
        cur.execute(
            "UPDATE memory_context SET version = %s, last_seq = %s, used_tokens = %s WHERE id = %s",
            [new_version, last_seq + 1, used - event_tokens, context_id],
        )
        cur.executemany(
            "INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at) VALUES (%s, %s, %s, now())",
            [
                (context_id, derived_pk, None),
                (context_id, release_pk, None),
                (context_id, None, event_pk),
                (context_id, None, tx_event),
            ],
        )


def bench_handwritten_sql(context_id: int, n: int, prefix: str = "h") -> list[float]:
    """The same rows the engine writes for the first example, in one psycopg transaction."""
    writer = HandwrittenCommits(context_id, n, prefix)
    try:
        return [writer.commit(i) for i in range(n)]
    finally:
        writer.close()


def bench_throughput(
    context_ids: list[int], threads: int, per_thread: int, prefix: str = ""
) -> float:
    from django.db import connection

    from memory.tx.engine import submit_transaction

    plans = []
    for t in range(threads):
        context_id = context_ids[t % len(context_ids)]
        plans.append((context_id, prepare_targets(context_id, f"{prefix}t{t}x", per_thread), t))
    barrier = threading.Barrier(threads + 1)
    errors: list[BaseException] = []

    def worker(context_id: int, pairs: list[tuple[int, int]], t: int) -> None:
        # Connected before the clock starts, as pgbench's clients are for the limit it is
        # compared with (pgbench's tps is "without initial connection time").
        connection.ensure_connection()
        barrier.wait()
        try:
            for k, seq in pairs:
                submit_transaction(
                    context_id,
                    text=FIRST_TX.format(base=0, k=f"{prefix}t{t}x{k}", seq=seq).replace(
                        "(base-version 0)\n  ", ""
                    ),
                )
        except BaseException as exc:  # report, never hang the benchmark
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=worker, args=plan) for plan in plans]
    elapsed = timed_threads(workers, barrier)
    if errors:
        raise errors[0]
    return threads * per_thread / elapsed


def _process_worker(args: tuple[int, list[tuple[int, int]], int, Any]) -> None:
    context_id, pairs, t, barrier = args
    setup_django(fresh=False)  # a spawned process: its own interpreter and connections
    from django.db import connection

    from memory.tx.engine import submit_transaction

    barrier.wait()
    for k, seq in pairs:
        submit_transaction(
            context_id,
            text=FIRST_TX.format(base=0, k=f"p{t}x{k}", seq=seq).replace(
                "(base-version 0)\n  ", ""
            ),
        )
    connection.close()


def bench_processes(context_id: int, processes: int, per_process: int) -> float:
    """The same commits from separate processes: no shared interpreter lock."""
    import multiprocessing

    from django.db import connection

    plans = [prepare_targets(context_id, f"p{t}x", per_process) for t in range(processes)]
    connection.close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes + 1)
    workers = [
        ctx.Process(target=_process_worker, args=((context_id, plans[t], t, barrier),))
        for t in range(processes)
    ]
    elapsed = timed_threads(workers, barrier)
    if any(w.exitcode for w in workers):
        raise RuntimeError("a benchmark process failed")
    return processes * per_process / elapsed


def bench_compile(
    history_events: int, frames: int, observations: int, repeat: int
) -> tuple[list[float], list[float]]:

    from memory.contexts import create_context
    from memory.models import Context
    from memory.timeline.compile import compile_active_context
    from memory.timeline.events import append_event

    context = create_context("bench-compile", capacity_tokens=10_000_000)
    seed_frames(context.pk, frames)
    for i in range(observations):
        append_event(
            context.pk, kind="tool_result", content=f"observation {i}: " + "all green " * 20
        )
    context.refresh_from_db()
    before = timed(lambda: compile_active_context(Context.objects.get(pk=context.pk)), repeat)
    grow_history(context.pk, history_events)  # old, retired observations
    after = timed(lambda: compile_active_context(Context.objects.get(pk=context.pk)), repeat)
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true", help="a quick run with small sizes")
    args = parser.parse_args()
    big_frames = 5_000 if args.small else 100_000
    history = 50_000 if args.small else 1_000_000
    n = 100 if args.small else 300

    setup_django()
    from memory.contexts import create_context

    print(f"== engine benchmark ({'small' if args.small else 'full'})")
    big = create_context("bench-big", capacity_tokens=100_000_000)
    t0 = time.perf_counter()
    seed_frames(big.pk, big_frames)
    print(f"seeded {big_frames} frames in {time.perf_counter() - t0:.1f} s")

    engine = bench_commit_latency(big.pk, n)
    sql = bench_handwritten_sql(big.pk, n)
    print(describe("commit (first example, engine)", engine))
    print(describe("commit (same rows, hand-written SQL)", sql))
    print(f"ratio engine/SQL at p50: {statistics.median(engine) / statistics.median(sql):.2f}")

    per_thread = 50 if args.small else 100
    one = bench_throughput([big.pk], 8, per_thread)
    many_ids = [create_context(f"bench-many-{i}", capacity_tokens=100_000_000).pk for i in range(8)]
    many = bench_throughput(many_ids, 8, per_thread)
    print(f"throughput, 8 threads on one context: {one:.0f} commits/s")
    single = bench_throughput(
        [create_context("bench-single", capacity_tokens=10**8).pk], 1, per_thread * 4
    )
    print(f"throughput, 1 thread on one context: {single:.0f} commits/s")
    procs = bench_processes(create_context("bench-procs", capacity_tokens=10**8).pk, 8, per_thread)
    print(f"throughput, 8 processes on one context: {procs:.0f} commits/s")
    print(f"throughput, 8 threads on 8 contexts: {many:.0f} commits/s")

    before, after = bench_compile(history, 500, 300, 50)
    print(describe("compile 500 frames + 300 observations", before))
    print(describe(f"compile after {history:,} more history events", after))


if __name__ == "__main__":
    main()
