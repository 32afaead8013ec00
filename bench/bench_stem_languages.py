"""What stems beyond English cost (`memory/search/languages.py`), on and off in one run.

    .venv/bin/python bench/bench_stem_languages.py --rounds 2

Indexing: the STATE-Bench train trajectories (English; bench_search_recall's corpus) and
the relevance benchmark's inflected documents (eight languages) appended, then drained by
the index worker, with the stems of a text's own language on and off in alternating rounds,
each round its own context: events per second each way, their ratio, and the index's size.
Queries: the STATE-Bench test openings (whole, and their two longest words) and the
inflected group's queries, searched with the query's other-language stems on and off,
interleaved query by query over the same context: p50 / p95 and their ratios.
Uses its own database (MORPHZ_BENCH_DB, default morphz_bench_stems).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

os.environ.setdefault("MORPHZ_BENCH_DB", "morphz_bench_stems")

from bench_search_recall import content_words, load_trajectories, test_queries
from common import percentile, setup_django
from relevance_queries import INFLECTED_DOCS, INFLECTED_QUERIES


@contextmanager
def stems_beyond_english(on: bool) -> Iterator[None]:
    """The code as it is (`on`) or as before it (no text's language read, no query word
    stemmed but in English)."""
    from memory.search import languages

    saved = languages.language, languages.query_stems
    if not on:
        languages.language = lambda terms: None
        languages.query_stems = lambda word: ()  # type: ignore[assignment]
    try:
        yield
    finally:
        languages.language, languages.query_stems = saved


def index_round(name: str, rows: list[tuple[str, str, str]], on: bool) -> tuple[int, float, int]:
    """(context, seconds the index worker took, bytes of its tsvectors)."""
    from django.db import connection

    from memory.contexts import create_context
    from memory.search.indexer import drain
    from memory.timeline.events import append_event

    context = create_context(name, capacity_tokens=2_000_000_000)
    for kind, content, thread in rows:
        append_event(context.pk, kind=kind, content=content, thread=thread)
    with stems_beyond_english(on):
        started = time.perf_counter()
        drain(batch_size=500)
        seconds = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(pg_column_size(tokens)), 0) FROM memory_searchdocument"
            " WHERE context_id = %s",
            [context.pk],
        )
        size = int(cursor.fetchone()[0])
    return context.pk, seconds, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="indexing rounds each way")
    args = parser.parse_args()
    setup_django(fresh=True)
    from django.db import connection

    from memory.search import languages
    from memory.search.query import forget_statistics, search

    languages.language(["la", "commande", "a", "été", "annulée"])  # the model loads once, untimed
    trajectories = load_trajectories()
    inflected = [("tool_result", text, f"t-{key}") for key, text in INFLECTED_DOCS]
    corpora = {"statebench": trajectories, "inflected": inflected * 20}
    index_round("warm-up", inflected, True)  # the embedder and the statements, untimed
    searched = 0
    for corpus, rows in corpora.items():
        seconds = {True: 0.0, False: 0.0}
        sizes = {True: 0, False: 0}
        for n in range(args.rounds):
            for on in (n % 2 == 0, n % 2 != 0):
                pk, took, size = index_round(f"{corpus}-{n}-{on}", rows, on)
                seconds[on] += took
                sizes[on] += size
                if corpus == "statebench" and on:
                    searched = pk
        events = len(rows) * args.rounds
        rate_on, rate_off = events / seconds[True], events / seconds[False]
        print(
            f"index {corpus}: {rate_on:,.0f} events/s on, {rate_off:,.0f} off "
            f"(on/off {rate_on / rate_off:.2f}x); tsvectors {sizes[True] / sizes[False]:.3f}x"
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    forget_statistics()
    openings = test_queries()
    queries = openings + [content_words(q) for q in openings]
    inflected_pk = index_round("inflected-search", inflected, True)[0]
    plan = [(searched, q) for q in queries if q] + [(inflected_pk, q) for q, _ in INFLECTED_QUERIES]
    times: dict[bool, list[float]] = {True: [], False: []}
    for pk, q in plan:
        search(pk, q, limit=20)  # warm: statistics, plans
        for on in (True, False) if len(times[True]) % 2 == 0 else (False, True):
            with stems_beyond_english(on):
                started = time.perf_counter()
                search(pk, q, limit=20)
                times[on].append((time.perf_counter() - started) * 1000)
    p50 = {on: percentile(times[on], 50) for on in times}
    p95 = {on: percentile(times[on], 95) for on in times}
    print(
        f"search ({len(plan)} queries): p50 {p50[True]:.1f} ms on, {p50[False]:.1f} off "
        f"({p50[True] / p50[False]:.2f}x); p95 {p95[True]:.1f} / {p95[False]:.1f} ms "
        f"({p95[True] / p95[False]:.2f}x)"
    )


if __name__ == "__main__":
    main()
