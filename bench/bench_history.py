"""History benchmark: forks, as-of reads, replay, export and import.

    .venv/bin/python bench/bench_history.py            # 10,000 frames, 50,000 events
    .venv/bin/python bench/bench_history.py --small    # quick smoke run

Every figure is a ratio against a baseline measured in the same run:
- a fork (at the present version) against a bare SQL copy of the same rows
  (`INSERT ... SELECT` per table, foreign keys rewritten by natural-key joins); target <= 2x;
- an as-of read of one frame 10,000 commits back against a read of the present; target <= 5x;
- replay (`verify_context`), export and import in events/s against appending the same
  events in bulk (one multi-row INSERT per 1,000 events through the engine's store).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

from common import describe, setup_django, timed


def build(context_id: int, frames: int, events: int, revise_every: int) -> None:
    """`frames` commits deriving one frame each from a fresh event, a revision every
    `revise_every` frames, then plain events up to `events` (bulk appends of 50), an
    evaluation every 50 events. Evaluations compile no model input here: the build is
    set-up, and a compile of every live frame and observation each time would dominate it."""
    from memory.timeline.bulk import append_events
    from memory.timeline.evaluation import evaluate
    from memory.timeline.events import append_event
    from memory.tx.engine import submit_transaction

    appended = 0
    for i in range(frames):
        ref = append_event(context_id, kind="tool_result", content=f"output {i} ok").event.ref
        appended += 1
        text = f"(context-tx (derive f{i} (from {ref}) (n {i}) (note seeded)))"
        submit_transaction(context_id, text=text)
        if i % revise_every == revise_every - 1:
            submit_transaction(context_id, text=f"(context-tx (revise f{i - 1} (n revised)))")
        if i % 50 == 0:
            evaluate(context_id, compile_input=False)
        if i % 2000 == 0:
            print(f"  built {i} frames", flush=True)
    while appended < events:
        count = min(50, events - appended)
        append_events(
            context_id,
            [
                {"kind": "external_fact", "content": f"fact {appended + k} observed"}
                for k in range(count)
            ],
        )
        appended += count
        evaluate(context_id, compile_input=False)
        if appended % 10000 == 0:
            print(f"  built {appended} events", flush=True)


BARE_COPY = [
    "SET LOCAL morphz.copying = 'on'",
    "INSERT INTO memory_evaluation (context_id, thread, idempotency_key, continuation, tick, "
    "advanced_tick, view_version, claimed_seqs, last_seq, result, created_at) "
    "SELECT %(dst)s, thread, idempotency_key, continuation, tick, advanced_tick, view_version, "
    "claimed_seqs, last_seq, result, created_at FROM memory_evaluation WHERE context_id = %(src)s",
    "INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at, "
    "idempotency_key, size_chars, token_estimate, is_observation, active, status_version, "
    "pending, delivers, request_state, delivered_by_seq) "
    "SELECT %(dst)s, seq, kind, thread, content, payload, created_at, idempotency_key, "
    "size_chars, token_estimate, is_observation, active, status_version, pending, delivers, "
    "request_state, delivered_by_seq FROM memory_event WHERE context_id = %(src)s",
    "INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, "
    "base_version, committed_version, status, reason, text, ops, receipt, errors, frame_ids, "
    "event_id, created_at) SELECT %(dst)s, t.author, t.author_kind, t.thread, t.base_version, "
    "t.committed_version, t.status, t.reason, t.text, t.ops, t.receipt, t.errors, t.frame_ids, "
    "ne.id, t.created_at FROM memory_transactionrecord t "
    "LEFT JOIN memory_event oe ON oe.id = t.event_id "
    "LEFT JOIN memory_event ne ON ne.context_id = %(dst)s AND ne.seq = oe.seq "
    "WHERE t.context_id = %(src)s",
    "INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, "
    "protected, retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
    "token_estimate, created_version, changed_version, updated_at) "
    "SELECT %(dst)s, frame_id, revision, body, sources, status, protected, "
    "retire_requested_tick, retire_due_tick, retire_reason, retire_generation, token_estimate, "
    "created_version, changed_version, updated_at FROM memory_frame WHERE context_id = %(src)s",
    "INSERT INTO memory_framerevision (frame_id, revision, body, sources, transaction_id, "
    "version, created_at) SELECT nf.id, r.revision, r.body, r.sources, nt.id, r.version, "
    "r.created_at FROM memory_framerevision r JOIN memory_frame f ON f.id = r.frame_id "
    "JOIN memory_frame nf ON nf.context_id = %(dst)s AND nf.frame_id = f.frame_id "
    "JOIN memory_transactionrecord nt ON nt.context_id = %(dst)s "
    "AND nt.committed_version = r.version WHERE f.context_id = %(src)s",
    "INSERT INTO memory_framechange (context_id, frame_id, version, revision, status, "
    "protected, retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
    "token_estimate) SELECT %(dst)s, nf.id, c.version, c.revision, c.status, c.protected, "
    "c.retire_requested_tick, c.retire_due_tick, c.retire_reason, c.retire_generation, "
    "c.token_estimate FROM memory_framechange c JOIN memory_frame f ON f.id = c.frame_id "
    "JOIN memory_frame nf ON nf.context_id = %(dst)s AND nf.frame_id = f.frame_id "
    "WHERE c.context_id = %(src)s",
    "INSERT INTO memory_settingschange (context_id, kind, version, last_seq, evaluations, "
    "settings, created_at) SELECT %(dst)s, kind, version, last_seq, evaluations, settings, "
    "created_at FROM memory_settingschange WHERE context_id = %(src)s",
    "INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version, "
    "removed_version) SELECT %(dst)s, ns.id, r.name, no.id, r.created_version, "
    "r.removed_version FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id "
    "JOIN memory_frame o ON o.id = r.object_id "
    "JOIN memory_frame ns ON ns.context_id = %(dst)s AND ns.frame_id = s.frame_id "
    "JOIN memory_frame no ON no.context_id = %(dst)s AND no.frame_id = o.frame_id "
    "WHERE r.context_id = %(src)s",
    "INSERT INTO memory_searchdocument (context_id, frame_id, event_id, ref, status, kind, "
    "thread, created_at, tokens, length, indexed_at) SELECT %(dst)s, nf.id, ne.id, d.ref, "
    "d.status, d.kind, d.thread, d.created_at, d.tokens, d.length, d.indexed_at "
    "FROM memory_searchdocument d "
    "LEFT JOIN memory_frame f ON f.id = d.frame_id "
    "LEFT JOIN memory_frame nf ON nf.context_id = %(dst)s AND nf.frame_id = f.frame_id "
    "LEFT JOIN memory_event e ON e.id = d.event_id "
    "LEFT JOIN memory_event ne ON ne.context_id = %(dst)s AND ne.seq = e.seq "
    "WHERE d.context_id = %(src)s",
]


class _Rollback(Exception):
    pass


def bare_copy(source_id: int) -> float:
    """Milliseconds for the hand-written copy (rolled back)."""
    from django.db import connection, transaction

    from memory.contexts import create_context

    start = time.perf_counter()
    try:
        with transaction.atomic():
            dst = create_context(f"bare-{time.monotonic_ns()}")
            with connection.cursor() as cur:
                for sql in BARE_COPY:
                    cur.execute(sql, {"src": source_id, "dst": dst.pk})
            elapsed = (time.perf_counter() - start) * 1000
            raise _Rollback
    except _Rollback:
        pass
    return elapsed


def fork_once(source_id: int) -> float:
    from django.db import transaction

    from memory.versions.forks import fork_context

    start = time.perf_counter()
    try:
        with transaction.atomic():
            fork_context(source_id, slug=f"fork-{time.monotonic_ns()}")
            elapsed = (time.perf_counter() - start) * 1000
            raise _Rollback
    except _Rollback:
        pass
    return elapsed


def bulk_append_rate(context_id: int) -> float:
    """Events/s appending the same events (content, kind, thread) in multi-row INSERTs of
    1,000, as a bulk append would, into a scratch context (rolled back)."""
    from django.db import connection, transaction

    from memory.contexts import create_context
    from memory.models import Event

    rows = list(
        Event.objects.filter(context_id=context_id)
        .order_by("seq")
        .values_list("seq", "kind", "thread", "content", "token_estimate", "is_observation")
    )
    start = time.perf_counter()
    try:
        with transaction.atomic():
            dst = create_context(f"bulk-{time.monotonic_ns()}")
            with connection.cursor() as cur:
                for i in range(0, len(rows), 1000):
                    chunk = rows[i : i + 1000]
                    values = ", ".join(
                        ["(%s, %s, %s, %s, %s, now(), %s, %s, %s, %s, 0, false, '{}')"] * len(chunk)
                    )
                    params: list[Any] = []
                    for seq, kind, thread, content, tokens, observed in chunk:
                        params += [
                            dst.pk,
                            seq,
                            kind,
                            thread,
                            content,
                            len(content),
                            tokens,
                            observed,
                            observed,
                        ]
                    cur.execute(
                        "INSERT INTO memory_event (context_id, seq, kind, thread, content, "  # noqa: S608 - constant SQL fragments; values are parameters
                        "created_at, size_chars, token_estimate, is_observation, active, "
                        f"status_version, pending, delivers) VALUES {values}",
                        params,
                    )
            elapsed = time.perf_counter() - start
            raise _Rollback
    except _Rollback:
        pass
    return len(rows) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--frames", type=int, default=None)
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--skip-replay", action="store_true")
    parser.add_argument(
        "--reuse", action="store_true", help="keep the bench database's context if it exists"
    )
    args = parser.parse_args()
    frames = args.frames or (1_000 if args.small else 10_000)
    events = args.events or (5_000 if args.small else 50_000)
    back = min(10_000, frames)
    setup_django(fresh=not args.reuse)
    if args.reuse:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)

    from django.db import connection

    from memory.contexts import create_context
    from memory.models import Context
    from memory.search.indexer import drain

    started = time.perf_counter()
    existing = Context.objects.filter(slug="history-bench").first() if args.reuse else None
    if existing is not None:
        context = existing
        print("reusing the context built before", flush=True)
    else:
        print(f"building a context with {frames} frames and {events} events ...", flush=True)
        context = create_context("history-bench", capacity_tokens=10**9)
        build(context.pk, frames, events, revise_every=10)
        drain()
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
        context.refresh_from_db()
    print(
        f"built in {time.perf_counter() - started:.0f} s: version {context.version}, "
        f"{context.last_seq} events, tick {context.tick}",
        flush=True,
    )

    measure_forks(context, back)
    measure_as_of(context, back)
    measure_exchange(context, replay=not args.skip_replay)


def measure_forks(context: Any, back: int) -> None:
    """A fork now, and one `back` versions back, against the bare copy."""
    bare = [bare_copy(context.pk) for _ in range(5)]
    forks = [fork_once(context.pk) for _ in range(5)]
    print(describe("bare INSERT...SELECT copy", bare))
    print(describe("fork (now)", forks))
    fork_ratio = statistics.median(forks) / statistics.median(bare)
    print(f"fork / bare copy: {fork_ratio:.2f}x (target <= 2x)")
    old = [fork_once_at(context.pk, context.version - back) for _ in range(3)]
    print(describe(f"fork at version {context.version - back}", old))
    print(f"fork back / bare copy: {statistics.median(old) / statistics.median(bare):.2f}x")


def as_of_and_present(
    context: Any, back: int, target: str, repeat: int
) -> tuple[list[float], list[float]]:
    """Milliseconds of reading frame `target` (and its view) as of `back` commits back, and
    of reading it now, interleaved read by read after a warm-up."""
    from memory.read import lists as reads
    from memory.shapes import frame_json
    from memory.versions import asof
    from memory.versions.points import resolve_point

    point = resolve_point(context, context.version - back)

    def present() -> Any:
        frame = reads.get_frame(context, target)
        assert frame is not None
        return frame_json(frame, context.tick)

    def past() -> Any:
        frame = asof.frame_as_of(context, point, target)
        assert frame is not None
        return frame_json(frame, point.tick)

    for _ in range(50):
        present()
        past()
    past_ms: list[float] = []
    now_ms: list[float] = []
    for _ in range(repeat):
        past_ms += timed(past, 1)
        now_ms += timed(present, 1)
    return past_ms, now_ms


def measure_as_of(context: Any, back: int) -> None:
    """One frame (and a page of 100) as of `back` commits back against the present."""
    from memory.read import lists as reads
    from memory.versions import asof
    from memory.versions.points import resolve_point

    past_ms, now_ms = as_of_and_present(context, back, "f5", 500)
    print(describe("frame read, present", now_ms))
    print(describe(f"frame read as of {back} commits back", past_ms))
    as_of_ratio = statistics.median(past_ms) / statistics.median(now_ms)
    print(f"as-of / present: {as_of_ratio:.2f}x (target <= 5x)")
    point = resolve_point(context, context.version - back)
    page_now = timed(lambda: reads.list_frames(context, limit=100), 50)
    page_past = timed(lambda: asof.frames_as_of(context, point, limit=100), 50)
    print(
        f"frame page of 100, as-of / present: "
        f"{statistics.median(page_past) / statistics.median(page_now):.2f}x"
    )


def measure_exchange(context: Any, replay: bool) -> None:
    """Export, import and replay in events/s against bulk appends of the same events."""
    from memory.contexts import delete_context
    from memory.models import Evaluation
    from memory.versions.exchange import export_context, import_context
    from memory.versions.replay import verify_context

    bulk = bulk_append_rate(context.pk)
    print(f"bulk append of the same events: {bulk:,.0f} events/s")
    n_events = context.last_seq
    n_steps = n_events + Evaluation.objects.filter(context=context).count()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.jsonl.gz")
        start = time.perf_counter()
        export_context(context, path)
        export_s = time.perf_counter() - start
        size = os.path.getsize(path)
        print(
            f"export: {n_events / export_s:,.0f} events/s ({n_steps} steps, {size / 1e6:.1f} MB,"
            f" {export_s:.1f} s) = {n_events / export_s / bulk:.2f}x bulk append"
        )
        if replay:
            start = time.perf_counter()
            result = import_context(path, slug="history-bench-imported")
            import_s = time.perf_counter() - start
            print(
                f"import (replay through the engine + verify): {n_events / import_s:,.0f} "
                f"events/s ({import_s:.1f} s) = {n_events / import_s / bulk:.3f}x bulk append"
            )
            delete_context(result.context.pk)
    if replay:
        start = time.perf_counter()
        differences = verify_context(context)
        replay_s = time.perf_counter() - start
        print(
            f"replay (verify_context): {n_events / replay_s:,.0f} events/s ({replay_s:.1f} s, "
            f"{'OK' if not differences else f'{len(differences)} differences'}) = "
            f"{n_events / replay_s / bulk:.3f}x bulk append"
        )


def fork_once_at(source_id: int, version: int) -> float:
    from django.db import transaction

    from memory.versions.forks import fork_context

    start = time.perf_counter()
    try:
        with transaction.atomic():
            fork_context(source_id, slug=f"fork-{time.monotonic_ns()}", at_version=version)
            elapsed = (time.perf_counter() - start) * 1000
            raise _Rollback
    except _Rollback:
        pass
    return elapsed


if __name__ == "__main__":
    main()
