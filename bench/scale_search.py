"""Search as history grows: the scaling table's search rows (`bench/run_all.py`).

Two contexts hold the same documents: the STATE-Bench train trajectories, appended in bulk
and indexed by the search worker. `search` then grows with the table's history sizes, its
history made of *copies* of those documents (retired tool results with the same text and
the same index entries, written by SQL), so every query word is found in more and more
documents as history grows: the hard case for a ranking, not history no query touches.
`search-small` keeps the first size, as `scale-small` does for compile.

Measured, interleaved query by query (the STATE-Bench test tasks' opening messages, and
their two most distinctive words): `search` against the same search in `search-small`
(flat in history). The bare count of the documents holding any query word, the baseline
of bench/bench_relevance.py, is no baseline here: it grows with the matches (seconds a
query at a million events), which the search is built not to read.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench_http import DATA, load_trajectories
from bench_search_recall import content_words, test_queries
from common import load_average, percentile, setup_django

SLUGS = ("search", "search-small")
BULK = 500


def seed_search(trajectories: int | None) -> dict[str, Any]:
    """`search` and `search-small`, each holding the trajectories' events, indexed; returns
    {slug: context, "search_originals": the last seq of those events}."""
    from django.db import connection

    from memory.contexts import create_context
    from memory.models import Context
    from memory.search.indexer import drain
    from memory.timeline.bulk import append_events

    events = [e for t in load_trajectories(trajectories) for e in t]
    made: dict[str, Any] = {}
    for slug in SLUGS:
        context = create_context(slug, capacity_tokens=2_000_000_000)
        for start in range(0, len(events), BULK):
            append_events(context.pk, events[start : start + BULK])
        made[slug] = context
    drain(batch_size=500)
    with connection.cursor() as cur:
        cur.execute("ANALYZE memory_searchdocument")
    made["search_originals"] = Context.objects.get(pk=made["search"].pk).last_seq
    return made


def grow_search_history(context_id: int, events: int, originals_last_seq: int) -> None:
    """Add `events` retired tool results to the context, each a copy of one of its indexed
    events up to `originals_last_seq` in turn (the text and the index entries, embedding
    included)."""
    from django.db import connection

    with connection.cursor() as cur:
        # The originals, numbered 0..n-1 in order; history event k copies original k mod n.
        cur.execute(
            "CREATE TEMPORARY TABLE o AS "
            "SELECT row_number() OVER (ORDER BY e.seq) - 1 AS n, e.content, e.thread, "
            "e.size_chars, e.token_estimate, d.tokens, d.length, d.embedding, d.embedding_model "
            "FROM memory_event e JOIN memory_searchdocument d ON d.event_id = e.id "
            "WHERE e.context_id = %s AND e.seq <= %s",
            [context_id, originals_last_seq],
        )
        cur.execute("CREATE INDEX ON o (n)")
        cur.execute(
            "SELECT c.last_seq, count(d.id) FROM memory_context c JOIN memory_event e "
            "ON e.context_id = c.id AND e.seq <= %s JOIN memory_searchdocument d "
            "ON d.event_id = e.id WHERE c.id = %s GROUP BY c.last_seq",
            [originals_last_seq, context_id],
        )
        last, n = cur.fetchone()
        chunk = 100_000
        for start in range(0, events, chunk):
            params = {
                "ctx": context_id,
                "first": last + start,
                "count": min(chunk, events - start),
                "n": n,
            }
            cur.execute(
                "INSERT INTO memory_event (context_id, seq, kind, thread, content, created_at, "
                "size_chars, token_estimate, is_observation, active, status_version, pending, "
                "delivers) SELECT %(ctx)s, %(first)s + g, 'tool_result', o.thread, o.content, "
                "clock_timestamp(), o.size_chars, o.token_estimate, true, false, 0, false, '{}' "
                "FROM generate_series(1, %(count)s) AS g JOIN o ON o.n = (%(first)s + g) %% %(n)s",
                params,
            )
            cur.execute(
                "INSERT INTO memory_searchdocument (context_id, event_id, ref, status, kind, "
                "thread, created_at, tokens, length, embedding, embedding_model, indexed_at) "
                "SELECT %(ctx)s, e.id, '@e' || e.seq, 'retired', 'tool_result', e.thread, "
                "e.created_at, o.tokens, o.length, o.embedding, o.embedding_model, now() "
                "FROM memory_event e "
                "JOIN o ON o.n = e.seq %% %(n)s WHERE e.context_id = %(ctx)s "
                "AND e.seq > %(first)s AND e.seq <= %(first)s + %(count)s",
                params,
            )
        cur.execute(
            "UPDATE memory_context SET last_seq = last_seq + %s WHERE id = %s", [events, context_id]
        )
        cur.execute("DROP TABLE o")
        # What the indexer and autovacuum do after a burst of writes (docs/search.md).
        cur.execute("SELECT gin_clean_pending_list('search_tokens_gin'::regclass)")
        cur.execute("VACUUM ANALYZE memory_searchdocument")


def queries() -> list[str]:
    """The test tasks' opening messages (questions) and their two most distinctive words."""
    messages = test_queries()
    return messages + [w for w in (content_words(m) for m in messages) if w]


def search_against_bases(
    context_id: int, small_id: int, runs: int
) -> dict[str, tuple[float, float]]:
    """(p50, p95) in ms of `search` here and of `search` in the small context, interleaved
    query by query."""
    from memory.search.query import search

    kinds = {
        "search": lambda q: search(context_id, q),
        "small": lambda q: search(small_id, q),
    }
    asked = queries()
    for q in asked[:10]:  # warm-up: the model, plans, kept word counts of both contexts
        for run in kinds.values():
            run(q)
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(runs):
        for q in asked:
            for name, run in kinds.items():
                began = time.perf_counter()
                run(q)
                samples[name].append((time.perf_counter() - began) * 1000)
    return {
        name: (statistics.median(values), percentile(values, 95))
        for name, values in samples.items()
    }


def available() -> bool:
    return DATA.is_dir()


def main() -> None:
    """The search rows alone, at each size: `--sizes 10000 100000 1000000` (the smallest is
    the base; run_all.py measures them with everything else)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=1, help="passes over the queries")
    parser.add_argument("--trajectories", type=int, default=100, help="as --quick seeds")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the contexts an earlier run left in MORPHZ_BENCH_DB, as they are",
    )
    args = parser.parse_args()
    if not available():
        raise SystemExit(f"not run: no STATE-Bench trajectories at {DATA}")
    print(f"scale_search; {load_average()}", flush=True)
    if args.reuse:
        _measure_again(args.runs)
        return
    setup_django(fresh=True)
    made = seed_search(args.trajectories)
    first = args.sizes[0]
    base, small = made["search"].pk, made["search-small"].pk
    for pk in (base, small):
        grow_search_history(pk, max(0, first - _events(pk)), made["search_originals"])
    for size in args.sizes:
        began = time.perf_counter()
        grow_search_history(base, max(0, size - _events(base)), made["search_originals"])
        grown = time.perf_counter() - began
        _row(f"{size:>9,} events (grown in {grown:.0f} s)", base, small, args.runs)


def _measure_again(runs: int) -> None:
    """One row at the sizes the contexts already have (no seeding, nothing grown)."""
    setup_django(fresh=False)
    from memory.models import Context

    base, small = (Context.objects.get(slug=slug).pk for slug in SLUGS)
    _row(f"{_events(base):>9,} events against {_events(small):,}", base, small, runs)


def _row(label: str, base: int, small: int, runs: int) -> None:
    """One printed row: search in `base` against the same search in `small`, p50 and p95."""
    got = search_against_bases(base, small, runs)
    (p50, p95), (p50_small, p95_small) = got["search"], got["small"]
    print(
        f"{label}: p50 {p50:.1f} ms / {p50_small:.1f} ms = {p50 / p50_small:.2f}x, "
        f"p95 {p95:.1f} / {p95_small:.1f} = {p95 / p95_small:.2f}x; {load_average()}",
        flush=True,
    )


def _events(context_id: int) -> int:
    from memory.models import Context

    return int(Context.objects.get(pk=context_id).last_seq)


if __name__ == "__main__":
    main()
