"""What search's ranking (`memory.search.ranking`) knows of a context's documents: how
many there are and their average length, how many hold each query word, and PostgreSQL's
list of the most common words over all contexts.

How it works: docs/internals.md, section `memory/search/statistics.py`."""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime
from typing import Any

from cachetools import TTLCache
from django.db import connection

from memory.search import vectors
from memory.sql import named_row, named_rows, statements

STATS_SECONDS = 60.0
CACHED_FROM = 1000  # smaller contexts are measured on every search (cheaply)
COUNT_CAP = 5000  # each query word's documents in the context are counted up to this many
# A word held by ranking.BROAD documents or more selects among the context's newest this
# many (`memory.search.ranking`): each match is a row read, so a word every hundredth
# event says costs ten thousand reads in a million-event history.
RECENT_WINDOW = 10_000
COUNTS_KEPT = 20_000  # counts kept at most: ~10 MB with everyday words, more for long identifiers
# A context's size is measured again once the index may have grown by GROWTH of it since:
# while a large load is being indexed, a stale small size makes a word look common, and a
# common word selects among its newest WIDE_POOL documents only. (Document ids are shared
# by all contexts, so this may measure a busy server's contexts more often, never less.)
GROWTH = 0.1
# A word the statistics show in at least SURE x the cap of a context's documents (counting
# every document outside the context, and every row changed since ANALYZE, against it:
# `held_at_least`) is not counted: its count would reach the cap, and counting reads its
# whole posting list (110,000 entries for an everyday word of a million-event history) to
# say so. The margin covers ANALYZE's sampling error.
SURE = 2.0


class _Cache:
    """Per-context document counts and average lengths, and PostgreSQL's common words."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # (context, transactions included) -> (documents, average length, recent since,
        # the largest document id when measured)
        self.contexts: TTLCache[tuple[int, bool], tuple[int, float, datetime | None, int]] = (
            TTLCache(COUNTS_KEPT, STATS_SECONDS)
        )
        self.common_loaded = -math.inf
        self.listed: dict[str, float] = {}
        self.floor = 0.0
        self.rows = 0.0  # the table's documents when last analysed
        # (context, filters, their values, item) -> documents holding the item, for contexts
        # of CACHED_FROM documents or more.
        self.counts: TTLCache[tuple[Any, ...], int] = TTLCache(COUNTS_KEPT, STATS_SECONDS)

    def context(self, ctx: int, include_tx: bool, last: int) -> tuple[int, float, datetime | None]:
        with self.lock:
            cached = self.contexts.get((ctx, include_tx))
        if cached is not None and last - cached[3] <= GROWTH * cached[0]:
            return cached[:3]
        sql = statements("memory.search")["context_size"].format(
            kind=_kind_filter(include_tx),
            recent_kind=_kind_filter(include_tx, "r"),
            window=RECENT_WINDOW,
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, {"ctx": ctx})
            row = named_row(cursor)
        assert row is not None  # an aggregate always answers one row
        count, since = row["documents"], row["since"]
        figures = (count, float(row["average"]), since)
        if count >= CACHED_FROM:
            with self.lock:
                self.contexts[(ctx, include_tx)] = (*figures, last)
        return figures

    def frequencies(self) -> tuple[dict[str, float], float, float]:
        """The share of all documents holding each lexeme PostgreSQL's statistics list (kept
        by ANALYZE/autovacuum), a share every unlisted lexeme is below, and the documents of
        the table those shares are of."""
        now = time.monotonic()
        if now - self.common_loaded > STATS_SECONDS:
            with connection.cursor() as cursor:
                cursor.execute(statements("memory.search")["common_words"])
                row = named_row(cursor)
            listed: dict[str, float] = {}
            floor = 0.0
            rows = float(row["rows"]) if row is not None and row["rows"] else 0.0
            if row is not None and row["words"] and row["shares"]:
                elems, freqs = row["words"], row["shares"]
                listed = dict(zip(elems, map(float, freqs[: len(elems)]), strict=False))
                floor = float(freqs[len(elems)]) if len(freqs) > len(elems) else 0.0
            with self.lock:
                self.listed, self.floor, self.rows = listed, floor, rows
                self.common_loaded = now
        return self.listed, self.floor, self.rows


_cache = _Cache()


def context_size(ctx: int, include_tx: bool, last: int) -> tuple[int, float]:
    """How many documents the context has (transaction events counted when `include_tx`)
    and their average length in words. `last`: the largest document id now
    (`cursor.bound`), which says how far the index may have grown since a kept size."""
    documents, average, _ = _cache.context(ctx, include_tx, last)
    return documents, average


def recent_since(ctx: int, include_tx: bool, last: int) -> datetime | None:
    """The `created_at` of the context's RECENT_WINDOW-th newest document (transaction
    events counted when `include_tx`): where its newest RECENT_WINDOW begin; None when the
    context holds fewer. `last` as for `context_size`."""
    return _cache.context(ctx, include_tx, last)[2]


def forget_statistics() -> None:
    """Measure again on the next search (after a bulk load, in tests)."""
    with _cache.lock:
        _cache.contexts.clear()
        _cache.counts.clear()
        _cache.common_loaded = -math.inf


def _kind_filter(include_tx: bool, alias: str = "d") -> str:
    return "" if include_tx else f" AND {alias}.kind <> 'transaction'"


def idf(df: float, documents: int) -> float:
    """BM25's inverse document frequency (always positive)."""
    documents = max(documents, math.ceil(df))
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def document_counts(
    ctx: int,
    items: list[tuple[str, str]],
    filters: str,
    params: dict[str, Any],
    documents: int,
    cap: int = COUNT_CAP,
    unfiltered: bool = False,
) -> list[float]:
    """How many of the context's `documents` (filters applied) hold each item, given as
    (tsquery literal, lexeme as the index stores it): counted exactly up to `cap`.
    Beyond the cap (a word in thousands of this context's documents) PostgreSQL's
    statistics say how many more, never fewer than the cap. `unfiltered`: the filters pass
    all `documents` (a search without filters), so an item the statistics show past the cap
    (`_sure`) is not counted. In a context of CACHED_FROM documents or more, counts made in
    the last STATS_SECONDS (same filters and values) are reused."""
    kept = documents >= CACHED_FROM
    values = sorted((k, str(v)) for k, v in params.items() if f"%({k})s" in filters)
    prefix = (ctx, filters, tuple(values), cap)  # `cap`: counted up to it (COUNT_CAP)
    counts: dict[str, int] = {}
    if kept:
        with _cache.lock:
            for literal, _ in items:
                count = _cache.counts.get((*prefix, literal))
                if count is not None:
                    counts[literal] = count
    if unfiltered:
        sure = [(literal, lexeme) for literal, lexeme in items if _sure(literal, lexeme)]
        counts.update({literal: cap for literal in _past(sure, documents, cap)})
    missing = list(dict.fromkeys(literal for literal, _ in items if literal not in counts))
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                statements("memory.search")["item_counts"].format(filters=filters, cap=cap),
                {**params, "ctx": ctx, "items": missing},
            )
            held = [row["held"] for row in named_rows(cursor)]
            counted = dict(zip(missing, held, strict=True))
        counts.update(counted)
        if kept:
            with _cache.lock:
                for literal, count in counted.items():
                    _cache.counts[(*prefix, literal)] = count
    estimates = []
    for literal, lexeme in items:
        estimate = float(counts[literal])
        if estimate >= cap:
            listed, floor, _ = _cache.frequencies()
            share = listed.get(lexeme[: vectors.MAX_TOKEN_CHARS], floor / 2)
            estimate = max(float(cap), share * documents)
        estimates.append(estimate)
    return estimates


def _sure(literal: str, lexeme: str) -> bool:
    """Whether tsquery `literal` holds every document holding `lexeme` (its spellings, an
    identifier's parts), so the statistics of the lexeme bound its count: not with a "not"
    (a stem item leaves out documents saying the word itself; a reply item, those saying it
    in the reply)."""
    return bool(lexeme) and "!" not in literal


def _past(items: list[tuple[str, str]], documents: int, cap: int) -> list[str]:
    """The literals of `items` (literal, lexeme) that PostgreSQL's statistics show in SURE x
    `cap` of a context's `documents` or more (`held_at_least`)."""
    listed, _, analysed = _cache.frequencies()
    shares = [(literal, listed.get(lexeme[: vectors.MAX_TOKEN_CHARS])) for literal, lexeme in items]
    shares = [(literal, share) for literal, share in shares if share is not None]
    if not shares:
        return []
    with connection.cursor() as cursor:
        cursor.execute(statements("memory.search")["table_changes"])
        row = named_row(cursor)
    live, changed = (row["live"], row["changed"]) if row is not None else (0, analysed)
    return [
        literal
        for literal, share in shares
        if held_at_least(share or 0.0, analysed, changed, live, documents) >= SURE * cap
    ]


def held_at_least(
    share: float, analysed: float, changed: float, live: float, documents: int
) -> float:
    """How many of a context's `documents` hold a lexeme at least, from the statistics: it
    was in `share` of the `analysed` rows at the last ANALYZE; `changed` rows were inserted,
    updated or deleted since (each may have taken it away), and the table now has `live`
    rows (all but the context's may hold it). Plain arithmetic (PostgreSQL's `pg_stats`
    and `pg_stat_user_tables` give the figures)."""
    table = max(live, analysed, documents)
    return share * analysed - changed - (table - documents)
