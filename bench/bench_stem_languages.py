"""What stems beyond English cost (`memory/search/languages.py`), on and off in one run.

    .venv/bin/python bench/bench_stem_languages.py --rounds 2
    .venv/bin/python bench/bench_stem_languages.py --context-languages

Indexing: the STATE-Bench train trajectories (English; bench_search_recall's corpus) and
the relevance benchmark's inflected documents (eight languages) appended, then drained by
the index worker, with the stems of a text's own language on and off in alternating rounds,
each round its own context: events per second each way, their ratio, and the index's size.
Queries: the STATE-Bench test openings (whole, and their two longest words) and the
inflected group's queries, searched with the query's other-language stems on and off,
interleaved query by query over the same context: p50 / p95 and their ratios.
`--context-languages` (alone): a query stemmed in its context's languages only
(`languages.held`) against the same query stemmed in every language of its script (as
before), interleaved, in a context of 10,000 English events (scale_search's `search-small`:
the STATE-Bench train trajectories, grown by copies) and in a fork of it with the
inflected documents added (eight languages): p50 / p95, their ratios, and how many of the
inflected queries find their document in the top ten each way.
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
from common import load_average, percentile, setup_django
from relevance_queries import INFLECTED_DOCS, INFLECTED_QUERIES
from scale_search import BULK, grow_search_history, queries
from scale_search import load_trajectories as trajectories


@contextmanager
def stems_beyond_english(on: bool) -> Iterator[None]:
    """The code as it is (`on`) or as before it (no text's language read, no query word
    stemmed but in English)."""
    from memory.search import languages

    saved = languages.language, languages.query_stems
    if not on:
        languages.language = lambda terms: None
        languages.query_stems = lambda word, codes: ()  # type: ignore[assignment]
    try:
        yield
    finally:
        languages.language, languages.query_stems = saved


@contextmanager
def every_language(on: bool) -> Iterator[None]:
    """With `on`, a query is stemmed in every language of its script, as before the
    context's languages were kept (`languages.held` answers all of them)."""
    from memory.search import languages

    saved = languages.held
    if on:
        languages.held = lambda context_id: frozenset(languages.SNOWBALL)
    try:
        yield
    finally:
        languages.held = saved


def english_context(events: int, filler: int) -> int:
    """A context of `events` English events: the STATE-Bench train trajectories (100 of
    them), indexed, grown by copies as scale_search's `search-small` is. With `filler`,
    a fork of it grown to that many events beside it (scale_search's `search`: the word
    index is shared by every context, and its size changes the plans)."""
    from django.db import connection

    from memory.contexts import create_context
    from memory.models import Context
    from memory.search.indexer import drain
    from memory.timeline.bulk import append_events
    from memory.versions.forks import fork_context

    rows = [event for trajectory in trajectories(100) for event in trajectory]
    context = create_context("stems-english", capacity_tokens=2_000_000_000)
    for start in range(0, len(rows), BULK):
        append_events(context.pk, rows[start : start + BULK])
    drain(batch_size=500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    originals = Context.objects.get(pk=context.pk).last_seq
    if filler:
        other = fork_context(context, slug="stems-filler").context.pk
        grow_search_history(other, max(0, filler - originals), originals)
    grow_search_history(context.pk, max(0, events - originals), originals)
    return context.pk


def stemmed_in(context_id: int, asked: list[str], runs: int) -> dict[bool, list[float]]:
    """Milliseconds of each search of `asked`, stemmed in every language (True) and in the
    context's (False), interleaved query by query, the order alternating."""
    from memory.search.query import search

    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for n, q in enumerate(asked):
            for every in (True, False) if n % 2 == 0 else (False, True):
                with every_language(every):
                    started = time.perf_counter()
                    search(context_id, q, limit=20)
                    times[every].append((time.perf_counter() - started) * 1000)
    return times


def found_inflected(context_id: int, refs: dict[str, str]) -> dict[bool, int]:
    """How many inflected queries find a document they name in the top ten, each way."""
    from memory.search.query import search

    found = {True: 0, False: 0}
    for every in found:
        with every_language(every):
            for q, labels in INFLECTED_QUERIES:
                hits = [hit["ref"] for hit in search(context_id, q, limit=10)["hits"]]
                found[every] += any(refs[key] in hits for key in labels)
    return found


def context_languages(events: int, runs: int, filler: int) -> None:
    """The `--context-languages` measurement (see the module)."""
    from django.db import connection

    from memory.search import languages
    from memory.search.indexer import drain
    from memory.timeline.events import append_event
    from memory.versions.forks import fork_context

    english = english_context(events, filler)
    mixed = fork_context(english, slug="stems-mixed").context.pk
    refs = {
        key: append_event(mixed, kind="tool_result", content=text, thread=f"t-{key}").event.ref
        for key, text in INFLECTED_DOCS
    }
    drain(batch_size=500)
    with connection.cursor() as cursor:  # the fork's documents, as autovacuum would in time
        cursor.execute("ANALYZE memory_searchdocument")
    print(f"languages held: english {sorted(languages.held(english))}, "
          f"mixed {sorted(languages.held(mixed))}; {load_average()}")  # fmt: skip
    asked = queries()
    inflected = [q for q, _ in INFLECTED_QUERIES]
    for context_id in (english, mixed):  # warm-up: statistics, plans, the model
        stemmed_in(context_id, asked[:10] + inflected[:5], 1)
    rows = [
        ("English context, English questions", english, asked),
        ("mixed context, English questions", mixed, asked),
        ("mixed context, inflected queries", mixed, inflected * 5),
    ]
    for label, context_id, plan in rows:
        times = stemmed_in(context_id, plan, runs)
        p50 = {every: percentile(times[every], 50) for every in times}
        p95 = {every: percentile(times[every], 95) for every in times}
        print(
            f"{label} ({len(times[False])} searches): p50 {p50[False]:.1f} ms context "
            f"languages, {p50[True]:.1f} every language ({p50[False] / p50[True]:.2f}x); "
            f"p95 {p95[False]:.1f} / {p95[True]:.1f} ms ({p95[False] / p95[True]:.2f}x)",
            flush=True,
        )
    found = found_inflected(mixed, refs)
    print(
        f"inflected queries with their document in the top 10: {found[False]} / "
        f"{len(INFLECTED_QUERIES)} context languages, {found[True]} every language; "
        f"{load_average()}"
    )


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
    parser.add_argument(
        "--context-languages",
        action="store_true",
        help="only the query stemmed in its context's languages against every language",
    )
    parser.add_argument("--events", type=int, default=10_000, help="--context-languages' size")
    parser.add_argument("--runs", type=int, default=1, help="--context-languages' passes")
    parser.add_argument(
        "--filler", type=int, default=0, help="--context-languages: events of another context"
    )
    args = parser.parse_args()
    setup_django(fresh=True)
    if args.context_languages:
        context_languages(args.events, args.runs, args.filler)
        return
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
