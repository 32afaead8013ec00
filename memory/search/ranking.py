"""How search chooses and orders documents (R33): BM25 over the index's lexemes, in SQL.

    plan(ctx_id, clauses, filters, params, include_tx) -> Plan
    ranked(plan, limit, offset) -> (rows, matched, exact)

Each query word (a clause: token and parts, `memory.search.textindex.query_clauses`) is
two items: its primary form (the word said in a document) and its secondary form (the
word as an identifier part, a Korean syllable pair, or in an event's payload;
`memory.search.vectors.clause_forms`); 2 to PHRASE_CLAUSES words found side by side in
order are one more item. An item weighs BM25's inverse document frequency of the documents
holding it (secondary items SECONDARY_WEIGHT of that), so a word's rarity as a word is not
diluted by its use inside identifiers. A document scores the sum of the items it holds
(presence, not counts), times BM25's length normalisation (k1 K1, b B, against the
context's average length), times FRAME_FACTOR for frames (what the agent chose to keep) or
TRANSACTION_FACTOR for transaction events (echoes of their frames). A frame whose id holds
a query word gets that word's weight once more (ID_WEIGHT).

Candidates: every document holding an item, found through the GIN index and ranked all
together in one statement (document frequencies are counted there, over the filtered
documents): no "newest first" cut, the best matches are found wherever they are. Items
PostgreSQL's statistics list in more than COMMON_FRACTION of all documents (kept by
ANALYZE/autovacuum) never have all their documents visited: they add their weight to the
candidates that hold them, and select documents themselves (the newest WIDE_POOL) only when
the other items matched fewer than WIDEN_BELOW.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction

from memory.search import vectors
from memory.search.snippets import WINDOW_BEFORE, WINDOW_CHARS

K1 = 1.5
B = 0.9
SECONDARY_WEIGHT = 0.5  # a part of an identifier, or a payload word, is half a word
ID_WEIGHT = 1.0
FRAME_FACTOR = 2.0
TRANSACTION_FACTOR = 0.3
COMMON_FRACTION = 0.2
WIDEN_BELOW = 200
WIDE_POOL = 1000
PHRASE_CLAUSES = 6
SCORED_CLAUSES = 24  # the first words of a very long query
STATS_SECONDS = 60.0
CACHED_FROM = 5000  # smaller contexts are measured on every search (cheaply)

_CONTEXT_SQL = """
SELECT count(*), coalesce(avg(d.length), 0) FROM memory_searchdocument d
WHERE d.context_id = %(ctx)s{kind}
"""
_GLOBAL_SQL = """
SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
WHERE schemaname = current_schema() AND tablename = 'memory_searchdocument'
  AND attname = 'tokens'
"""
_BRANCH_SQL = """SELECT d.id, {n} AS item FROM memory_searchdocument d
    WHERE d.context_id = %(ctx)s AND d.tokens @@ %(i{n})s::tsquery{filters}"""
_COMMON_SQL = """SELECT id, w FROM (
      SELECT d.id, {weight}::float8 AS w FROM memory_searchdocument d
      WHERE d.context_id = %(ctx)s AND d.tokens @@ %(i{n})s::tsquery{filters}
      ORDER BY d.created_at DESC, d.id DESC LIMIT {pool}) c{n}
    WHERE (SELECT count(*) FROM matched) < {widen}"""

# Items' weights are computed in the statement, from how many documents hold each (BM25's
# idf); their form weights and snippet words come as arrays indexed by item.
_RANK_SQL = """
WITH matched AS MATERIALIZED (
  {branches}
),
weights AS (
  SELECT item, (%(forms)s::float8[])[item + 1]
         * ln(1 + (greatest(%(docs)s, count(*)) - count(*) + 0.5) / (count(*) + 0.5)) AS w
  FROM matched GROUP BY item
),
summed AS (
  SELECT id, sum(w) AS w FROM (
    SELECT m.id, w.w FROM matched m JOIN weights w USING (item){common}
  ) x GROUP BY id
),
scored AS (
  SELECT d.id, d.created_at,
         (d.frame_id IS NOT NULL AND lower(d.ref) = %(exact)s) AS exact,
         (s.w{extra}) * (CASE WHEN d.frame_id IS NOT NULL THEN {frame}
                              WHEN d.kind = 'transaction' THEN {tx} ELSE 1 END)
           * {k1p1} / (1 + {k1} * (1 - {b} + {b} * d.length / %(avg)s)) AS score
  FROM summed s JOIN memory_searchdocument d ON d.id = s.id
),
hits AS (
  SELECT id, exact, score, created_at FROM scored
  ORDER BY exact DESC, score DESC, created_at DESC, id DESC
  LIMIT %(limit)s OFFSET %(offset)s
),
first AS (  -- snippets open at the query word that weighs most
  SELECT coalesce((SELECT (%(firsts)s::text[])[item + 1] FROM weights
                   ORDER BY w DESC, item LIMIT 1), (%(firsts)s::text[])[1]) AS word
)
SELECT h.score, d.frame_id, d.event_id, d.ref, d.status, d.kind, d.thread, d.created_at,
       f.frame_id, f.body::text, e.window, e.cut, e.payload, fw.word, c.n
FROM (SELECT count(*) AS n FROM summed) c
CROSS JOIN first fw
LEFT JOIN hits h ON true
LEFT JOIN memory_searchdocument d ON d.id = h.id
LEFT JOIN memory_frame f ON f.id = d.frame_id
LEFT JOIN LATERAL (
  -- The window is cut here so a huge log never leaves the database; when the first query
  -- word is not in the content it was found in the payload, which comes along then.
  SELECT substr(ev.content, greatest(1, w.pos - {before}), {width}) AS window,
         w.pos > {before} + 1 AS cut,
         CASE WHEN w.raw = 0 AND ev.kind <> 'transaction' THEN ev.payload::text END AS payload
  FROM memory_event ev
  CROSS JOIN LATERAL (SELECT strpos(lower(ev.content), fw.word) AS raw) r
  CROSS JOIN LATERAL (SELECT r.raw, coalesce(nullif(r.raw, 0), 1) AS pos) w
  WHERE ev.id = d.event_id
) e ON true
ORDER BY h.exact DESC, h.score DESC, d.created_at DESC, d.id DESC
"""


@dataclass
class Item:
    literal: str  # tsquery literal
    form_weight: float  # 1 for a word or the phrase, SECONDARY_WEIGHT for a secondary form
    first: str  # the word a snippet opens at when this item weighs most
    common: float | None = None  # its weight, when the statistics list it as common


@dataclass
class Plan:
    ctx: int
    filters: str  # " AND d.... " SQL, values in params
    params: dict[str, Any]
    items: list[Item]
    documents: int
    average: float  # the context's average document length in words
    id_words: list[tuple[list[str], int]] = field(default_factory=list)  # (words, item)


class _Cache:
    """Per-context document counts and average lengths, and PostgreSQL's common words."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.contexts: dict[tuple[int, bool], tuple[float, int, float]] = {}
        self.common_loaded = -math.inf
        self.common: dict[str, float] = {}

    def context(self, ctx: int, include_tx: bool) -> tuple[int, float]:
        now = time.monotonic()
        cached = self.contexts.get((ctx, include_tx))
        if cached is not None and now - cached[0] < STATS_SECONDS:
            return cached[1], cached[2]
        with connection.cursor() as cursor:
            cursor.execute(_CONTEXT_SQL.format(kind=_kind_filter(include_tx)), {"ctx": ctx})
            count, average = cursor.fetchone()
        if count >= CACHED_FROM:
            with self.lock:
                self.contexts[(ctx, include_tx)] = (now, count, float(average))
        return count, float(average)

    def common_words(self) -> dict[str, float]:
        """Lexemes PostgreSQL's statistics list as in more than COMMON_FRACTION of all
        documents (kept by ANALYZE/autovacuum), with that fraction."""
        now = time.monotonic()
        if now - self.common_loaded > STATS_SECONDS:
            with connection.cursor() as cursor:
                cursor.execute(_GLOBAL_SQL)
                row = cursor.fetchone()
            common: dict[str, float] = {}
            if row is not None and row[0] and row[1]:
                for elem, freq in zip(row[0], row[1][: len(row[0])], strict=False):
                    if freq > COMMON_FRACTION:
                        common[elem] = float(freq)
            with self.lock:
                self.common, self.common_loaded = common, now
        return self.common


_cache = _Cache()


def forget_statistics() -> None:
    """Measure again on the next search (after a bulk load, in tests)."""
    with _cache.lock:
        _cache.contexts.clear()
        _cache.common_loaded = -math.inf


def _kind_filter(include_tx: bool) -> str:
    return "" if include_tx else " AND d.kind <> 'transaction'"


def idf(df: float, documents: int) -> float:
    """BM25's inverse document frequency (always positive)."""
    documents = max(documents, math.ceil(df))
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def plan(
    ctx: int,
    clauses: list[tuple[str, list[str]]],
    filters: str,
    params: dict[str, Any],
    include_tx: bool,
) -> Plan:
    """The query's items (see the module); common ones get their weight here."""
    clauses = clauses[:SCORED_CLAUSES]
    documents, average = _cache.context(ctx, include_tx)
    known = _cache.common_words()
    items: list[Item] = []
    id_words = []
    for token, parts in clauses:
        first = parts[0] if parts else token
        id_words.append((parts or [token], len(items)))
        forms = vectors.clause_forms(token, parts)
        for literal, weight in zip(forms, (1.0, SECONDARY_WEIGHT), strict=True):
            item = Item(literal, weight, first)
            frequency = known.get(literal[1:-1]) if literal.count("'") == 2 else None
            if frequency is not None:
                item.common = weight * idf(frequency * documents, documents)
            items.append(item)
    if 2 <= len(clauses) <= PHRASE_CLAUSES:
        # Words found next to each other, in the query's order, count once more.
        phrase = " <-> ".join(vectors.clause_any(t, p) for t, p in clauses)
        items.append(Item(phrase, 1.0, items[0].first))
    return Plan(ctx, filters, params, items, documents, average, id_words)


def _sql(plan: Plan, params: dict[str, Any]) -> str:
    """The ranking statement for this plan; fills the items' parameters into `params`."""
    branches, common, extra = [], "", ""
    for n, item in enumerate(plan.items):
        params[f"i{n}"] = item.literal
        if item.common is None:
            branches.append(_BRANCH_SQL.format(n=n, filters=plan.filters))
            continue
        weight = f"{item.common:.6f}"
        common += "\n    UNION ALL " + _COMMON_SQL.format(
            weight=weight, n=n, filters=plan.filters, pool=WIDE_POOL, widen=WIDEN_BELOW
        )
        extra += f" + CASE WHEN d.tokens @@ %(i{n})s::tsquery THEN {weight} ELSE 0 END"
    if not branches:
        branches.append("SELECT NULL::bigint AS id, 0 AS item WHERE false")
    bonus = []
    words = "regexp_split_to_array(lower(d.ref), '[^[:alnum:]]+')"
    for k, (wanted, item_n) in enumerate(plan.id_words):
        params[f"w{k}"] = wanted
        weight = f"coalesce((SELECT w FROM weights WHERE item = {item_n}), 0)"  # noqa: S608
        bonus.append(f"CASE WHEN %(w{k})s::text[] <@ {words} THEN {weight} ELSE 0 END")
    if bonus:  # a frame whose id holds a query word: that word counts once more
        extra += f" + CASE WHEN d.frame_id IS NULL THEN 0 ELSE {ID_WEIGHT} * ("
        extra += " + ".join(bonus) + ") END"
    return _RANK_SQL.format(
        branches="\n  UNION ALL ".join(branches),
        common=common,
        extra=extra,
        frame=FRAME_FACTOR,
        tx=TRANSACTION_FACTOR,
        k1p1=K1 + 1,
        k1=K1,
        b=B,
        before=WINDOW_BEFORE,
        width=WINDOW_CHARS,
    )


def ranked(plan: Plan, limit: int, offset: int) -> tuple[list[tuple[Any, ...]], int, bool]:
    """One page of ranked rows (score, document, frame and event columns for snippets, then
    the snippet word), how many documents matched in all, and whether that count is exact
    (common words that selected their newest WIDE_POOL documents leave a lower bound)."""
    params = dict(plan.params)
    params.update({"ctx": plan.ctx, "limit": limit, "offset": offset, "docs": plan.documents})
    params["avg"] = max(plan.average, 1.0)
    params["forms"] = [item.form_weight for item in plan.items]
    params["firsts"] = [item.first for item in plan.items]
    sql = _sql(plan, params)
    with transaction.atomic(), connection.cursor() as cursor:
        # Parallel workers cost more to start than this statement takes.
        cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        cursor.execute("SET LOCAL max_parallel_workers_per_gather TO DEFAULT")
    matched = rows[0][-1] if rows else 0
    widened = any(item.common is not None for item in plan.items) and matched >= WIDE_POOL
    return [row[:-1] for row in rows if row[3] is not None], matched, not widened
