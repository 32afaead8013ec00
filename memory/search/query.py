"""Lexical search over frames (every status) and events (every kind, retired too) (R33–R36).

    search(context, q, *, type=None, status=None, kind=None, thread=None, since=None,
           until=None, transactions=False, limit=20, offset=0)
        -> {hits, total, total_exact, next_offset, lag, query}

- `q` goes through the same pipeline as the indexed text (`memory.search.textindex`: NFKC, case
  folding, ICU words, identifier parts, Korean syllable pairs, emoji). Each query word is a
  clause: a document matches it when it holds the word, or the phrase of its parts
  (`create_user` finds `test_create_user`; `결과를` finds `결과를`). Documents matching any
  clause are candidates, ranked like BM25 would: each clause counts by how rare it is
  (inverse document frequency), how often and in which field it occurs (a frame's id
  weighs most, then its body, then event text, then event payloads), with diminishing
  returns. A sentence therefore finds the documents that share its distinctive words; it
  does not need every word.
- Order: a frame whose id is the query comes first; then by score, newest first on ties.
  Frames outrank events that match equally (their fields weigh more).
- Transaction events echo what the frames they wrote hold: they are left out unless
  `transactions` is true or `kind` is ``transaction``, and weigh little when included.
- Filters: `type` ``frame`` | ``event``; `status` ``active`` | ``retiring`` | ``retired``
  (frames) or ``active`` | ``retired`` | ``recorded`` (events; ``recorded`` = not an
  observation); `kind` an event kind (frames have kind ``frame``); `thread`; `since` /
  `until` (datetimes or ISO 8601 strings; a frame's time is its last change, an event's
  its creation; `since` inclusive, `until` exclusive).
- Hits, best first: ``{type, id (frames) | ref (events), ref, status, kind, thread,
  created_at, score, snippet, snippet_parts: [{text, match}], next}`` where `next` says what
  to call to go further: ``{"recall": {"frame_id": ...}}`` or ``{"read": "@e42"}``.
- `total`: how many documents match (hold a distinctive query word), counted up to
  TOTAL_CAP (`total_exact` false beyond). Pages: `offset` (0-based) and `limit`;
  `next_offset` is the offset of the next page, or null. The best RANK_POOL candidates are
  ranked, so paging stops there.
- `lag`: ``{pending_intents, oldest_pending_seconds}`` from the outbox (search may lag the
  facts a little; reading a frame or event by id never does, R35).
- Errors: InvalidRequest with codes ``invalid_query`` (empty, too long, or no word or
  emoji), ``invalid_type``, ``invalid_status``, ``invalid_kind``, ``invalid_thread``,
  ``invalid_time``, ``invalid_limit``, ``invalid_offset``.

Storage (chosen by measurement, see BENCHMARKS.md): a weighted ``tsvector`` per document
built from the pipeline's terms (quoted lexemes, no stemming, no stop words) with a GIN
index. How common a word is comes from PostgreSQL's own statistics on that column
(``pg_stats.most_common_elems``, kept by ANALYZE/autovacuum; a word not listed there is
rarer than every listed one): no extra table to keep in step. Very common words (in more
than COMMON_FRACTION of the documents) rank but do not select candidates, unless the query
has nothing rarer. Candidates: the newest RANK_POOL documents holding every clause, and
the newest RANK_POOL holding a distinctive one. Documents keep no copy of the text:
snippets are cut from the facts for the hits returned.
"""

from __future__ import annotations

import json
import math
import threading
import time
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils.dateparse import parse_datetime

from memory.errors import InvalidRequest
from memory.kinds import EVENT_KINDS, FRAME_STATUSES, TRANSACTION
from memory.limits import SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MAX_QUERY_CHARS
from memory.models import Context
from memory.read.history import resolve_context
from memory.search import textindex
from memory.search.indexer import index_lag
from memory.shapes import search_hit
from memory.vocabulary import is_thread_name

WINDOW_BEFORE = 60
WINDOW_CHARS = 240
STATUSES = (*FRAME_STATUSES, "recorded")

RANK_POOL = 1000  # candidates ranked per query (per way of matching, see below)
TOTAL_CAP = 1000  # matches counted exactly up to this many
COMMON_FRACTION = 0.05  # a word in more documents than this ranks but selects nothing
WIDEN_BELOW = 200  # fewer distinctive matches than this: common words select candidates too
PHRASE_CLAUSES = 6  # queries of 2 to 6 words also score their words side by side
SCORED_CLAUSES = 12  # the rarest clauses are scored (bounds the cost of long questions)
STATS_SECONDS = 60.0  # how long the word statistics are reused
# ts_rank weights for {D, C, B, A}: event payload, event text, frame body, frame id.
WEIGHTS = "{0.1, 0.4, 0.6, 1.0}"
TRANSACTION_FACTOR = 0.3
# Frames are what the agent decided to keep: a frame matching as well as an event comes
# first (short events would otherwise win on length alone).
FRAME_FACTOR = 2.0
# ts_rank normalisation: 1 divides by 1 + log(document length): long logs do not win by
# holding every word somewhere (chosen on the relevance benchmark).
NORMALISATION = 1
LENGTH_B = 0.0
AVERAGE_TERMS = 100.0

_SEARCH_SQL = """
WITH sel AS MATERIALIZED (
  {selective}
),
pool AS MATERIALIZED (
  SELECT id FROM sel
  {more_pools}
),
scored AS (
  SELECT d.id, d.created_at,
         (d.frame_id IS NOT NULL AND lower(d.ref) = %(exact)s) AS exact,
         ({score}) * (CASE WHEN d.frame_id IS NOT NULL THEN {frame_factor}
                           WHEN d.kind = 'transaction' THEN {tx_factor} ELSE 1 END) AS score
  FROM memory_searchdocument d
  WHERE d.id = ANY(ARRAY(SELECT id FROM pool))  -- by primary key, never a scan of the table
),
hits AS (
  SELECT s.id, s.exact, s.score, s.created_at, count(*) OVER () AS pooled
  FROM scored s
  ORDER BY s.exact DESC, s.score DESC, s.created_at DESC, s.id DESC
  LIMIT %(limit)s OFFSET %(offset)s
)
SELECT h.score, d.frame_id, d.event_id, d.ref, d.status, d.kind, d.thread, d.created_at,
       f.frame_id, f.body::text, e.window, e.cut, e.payload, h.pooled,
       {total} AS total
FROM hits h
JOIN memory_searchdocument d ON d.id = h.id
LEFT JOIN memory_frame f ON f.id = d.frame_id
LEFT JOIN LATERAL (
  -- The window is cut here so a huge log never leaves the database; when the first query
  -- word is not in the content it was found in the payload, which comes along then.
  SELECT substr(ev.content, greatest(1, w.pos - {before}), {width}) AS window,
         w.pos > {before} + 1 AS cut,
         CASE WHEN w.raw = 0 AND ev.kind <> 'transaction' THEN ev.payload::text END AS payload
  FROM memory_event ev
  CROSS JOIN LATERAL (SELECT strpos(lower(ev.content), %(first)s) AS raw) r
  CROSS JOIN LATERAL (SELECT r.raw, coalesce(nullif(r.raw, 0), 1) AS pos) w
  WHERE ev.id = d.event_id
) e ON true
ORDER BY h.exact DESC, h.score DESC, d.created_at DESC, d.id DESC
"""

# Common words select candidates too when the distinctive ones found few: in a small
# context every word is "common" to a few documents, and a short query must still rank them.
_WIDE_SQL = """
  UNION
  SELECT id FROM (
    SELECT d.id FROM memory_searchdocument d
    WHERE d.context_id = %(ctx)s AND d.tokens @@ %(wide)s::tsquery {filters}
    ORDER BY d.created_at DESC, d.id DESC LIMIT %(pool)s
  ) wide WHERE (SELECT count(*) FROM sel) < %(widen)s"""

_POOL_SQL = """(SELECT d.id FROM memory_searchdocument d
   WHERE d.context_id = %(ctx)s AND d.tokens @@ %({name})s::tsquery {filters}
   ORDER BY d.created_at DESC, d.id DESC LIMIT %(pool)s)"""

_TOTAL_SQL = """(SELECT count(*) FROM (
          SELECT 1 FROM memory_searchdocument m
          WHERE m.context_id = %(ctx)s AND m.tokens @@ %({name})s::tsquery {filters}
          LIMIT %(cap)s) matched)"""

_COUNT_SQL = """
SELECT count(*) FROM (
  SELECT 1 FROM memory_searchdocument d
  WHERE d.context_id = %(ctx)s AND d.tokens @@ %(any)s::tsquery {filters}
  LIMIT %(cap)s
) matched
"""

_STATS_SQL = """
SELECT most_common_elems::text::text[], most_common_elem_freqs
FROM pg_stats
WHERE schemaname = current_schema() AND tablename = 'memory_searchdocument'
  AND attname = 'tokens'
"""


class _Stats:
    """How common each frequent word is (fraction of documents), from pg_stats."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded_at = -math.inf
        self.frequencies: dict[str, float] = {}
        self.floor = 0.0  # every unlisted word is rarer than this

    def get(self) -> tuple[dict[str, float], float]:
        now = time.monotonic()
        if now - self.loaded_at > STATS_SECONDS:
            with connection.cursor() as cursor:
                cursor.execute(_STATS_SQL)
                row = cursor.fetchone()
            frequencies: dict[str, float] = {}
            floor = 0.0
            if row is not None and row[0] and row[1]:
                elems, freqs = row
                frequencies = dict(zip(elems, freqs[: len(elems)], strict=False))
                floor = float(freqs[len(elems)]) if len(freqs) > len(elems) else 0.0
            with self.lock:
                self.frequencies, self.floor, self.loaded_at = frequencies, floor, now
        return self.frequencies, self.floor


_stats = _Stats()

# English function words, dropped from a query that has other words (a query of only these
# is searched as it is).
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def forget_statistics() -> None:
    """Read the word statistics again on the next search (after a bulk load, in tests)."""
    _stats.loaded_at = -math.inf


def _fraction(
    token: str, token_parts: list[str], frequencies: dict[str, float], floor: float
) -> float:
    """Estimated fraction of documents matching a clause."""
    if not frequencies:
        return 0.0
    rare = floor / 2
    whole = frequencies.get(token, rare)
    if token_parts:
        phrase = min(frequencies.get(p, rare) for p in token_parts)
        return min(1.0, whole + phrase)
    return whole


def _idf(fraction: float) -> float:
    """BM25's inverse document frequency for a fraction of documents (1.0 when unknown)."""
    if fraction <= 0.0:
        return 1.0
    return math.log(1.0 + (1.0 - fraction + 1e-6) / (fraction + 1e-6))


def _window(text: str, first: str) -> tuple[str, bool]:
    """Like the SQL above, for text made in Python (a frame's flattened body)."""
    found = text.lower().find(first)
    start = max(0, found - WINDOW_BEFORE) if found >= 0 else 0
    return text[start : start + WINDOW_CHARS], start > 0


def _time(value: Any, name: str) -> datetime | None:
    if value is None or value == "":
        return None
    parsed = (
        value
        if isinstance(value, datetime)
        else parse_datetime(value)
        if isinstance(value, str)
        else None
    )
    if parsed is None:
        raise InvalidRequest(
            f"{name} must be an ISO 8601 date-time like 2025-01-31T12:00:00Z",
            code="invalid_time",
            details=[{"field": name}],
        )
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _check(
    q: Any, type: Any, status: Any, kind: Any, thread: Any, limit: Any, offset: Any
) -> list[tuple[str, list[str]]]:
    if not isinstance(q, str) or not q.strip() or len(q) > SEARCH_MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"q must be a non-empty query of at most {SEARCH_MAX_QUERY_CHARS} characters",
            code="invalid_query",
            details=[{"field": "q"}],
        )
    clauses = textindex.query_clauses(q)
    if not clauses:
        raise InvalidRequest(
            "q has no word or emoji to search for", code="invalid_query", details=[{"field": "q"}]
        )
    if type not in (None, "frame", "event"):
        raise InvalidRequest(
            "type must be frame or event", code="invalid_type", details=[{"field": "type"}]
        )
    if status is not None and status not in STATUSES:
        raise InvalidRequest(
            f"status must be one of {', '.join(STATUSES)}",
            code="invalid_status",
            details=[{"field": "status"}],
        )
    if kind is not None and kind not in (*EVENT_KINDS, "frame"):
        raise InvalidRequest(
            f"kind must be one of {', '.join(EVENT_KINDS)}",
            code="invalid_kind",
            details=[{"field": "kind"}],
        )
    if thread is not None and not is_thread_name(thread):
        raise InvalidRequest(
            "thread is not a valid thread name",
            code="invalid_thread",
            details=[{"field": "thread"}],
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX_LIMIT:
        raise InvalidRequest(
            f"limit must be an integer from 1 to {SEARCH_MAX_LIMIT}",
            code="invalid_limit",
            details=[{"field": "limit"}],
        )
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < RANK_POOL:
        raise InvalidRequest(
            f"offset must be an integer from 0 to {RANK_POOL - 1}",
            code="invalid_offset",
            details=[{"field": "offset"}],
        )
    return clauses


def search(
    context: Context | int,
    q: str,
    *,
    type: str | None = None,
    status: str | None = None,
    kind: str | None = None,
    thread: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    transactions: bool = False,
    limit: int = SEARCH_DEFAULT_LIMIT,
    offset: int = 0,
) -> dict[str, Any]:
    """Ranked hits for `q` in this context, with snippets, the total and the index lag."""
    clauses = _check(q, type, status, kind, thread, limit, offset)
    # A question's function words ("how do we ...") carry no meaning of their own.
    clauses = [c for c in clauses if c[0] not in STOP_WORDS] or clauses
    start, end = _time(since, "since"), _time(until, "until")
    ctx = resolve_context(context)
    frequencies, floor = _stats.get()
    fractions = [_fraction(t, p, frequencies, floor) for t, p in clauses]
    literals = [textindex.clause_tsquery(t, p) for t, p in clauses]
    distinctive = [lit for lit, f in zip(literals, fractions, strict=True) if f <= COMMON_FRACTION]
    any_literal = " | ".join(distinctive or literals)
    scored = sorted(zip(fractions, literals, strict=True))[:SCORED_CLAUSES]
    rarest = min(range(len(clauses)), key=lambda i: fractions[i])
    params: dict[str, Any] = {
        "any": any_literal,
        "all": " & ".join(literals),
        "ctx": ctx.pk,
        "limit": limit,
        "offset": offset,
        "pool": RANK_POOL,
        "cap": TOTAL_CAP + 1,
        "exact": q.strip().lower(),
        "first": clauses[rarest][0] if not clauses[rarest][1] else clauses[rarest][1][0],
    }
    score_parts = []
    for index, (fraction, literal) in enumerate(scored):
        params[f"c{index}"] = literal
        score_parts.append(
            f"{_idf(fraction):.6f} * ts_rank('{WEIGHTS}', d.tokens, %(c{index})s::tsquery, "
            f"{NORMALISATION})"
        )
    if 2 <= len(clauses) <= PHRASE_CLAUSES:
        # Words found next to each other, in the query's order, count once more.
        params["phrase"] = " <-> ".join(textindex.clause_tsquery(t, []) for t, _ in clauses)
        weight = sum(_idf(f) for f in fractions) / len(fractions)
        score_parts.append(
            f"CASE WHEN d.tokens @@ %(phrase)s::tsquery THEN {weight:.6f} * "
            f"ts_rank('{WEIGHTS}', d.tokens, %(phrase)s::tsquery, {NORMALISATION}) ELSE 0 END"
        )
    filters = []
    if type == "frame":
        filters.append("d.frame_id IS NOT NULL")
    elif type == "event":
        filters.append("d.event_id IS NOT NULL")
    for name, value in (("status", status), ("kind", kind), ("thread", thread)):
        if value is not None:
            filters.append(f"d.{name} = %({name})s")
            params[name] = value
    if not transactions and kind != TRANSACTION:
        filters.append(f"d.kind <> '{TRANSACTION}'")
    if start is not None:
        filters.append("d.created_at >= %(since)s")
        params["since"] = start
    if end is not None:
        filters.append("d.created_at < %(until)s")
        params["until"] = end
    where = "".join(f" AND {f}" for f in filters)
    more_pools = ""
    if len(clauses) > 1 and params["all"] != params["any"]:
        more_pools += "UNION " + _POOL_SQL.format(name="all", filters=where)
    count_filters = where.replace("d.", "m.")
    total_sql = _TOTAL_SQL.format(name="any", filters=count_filters)
    if distinctive and len(distinctive) < len(literals):
        params["wide"] = " | ".join(literals)
        params["widen"] = WIDEN_BELOW
        more_pools += _WIDE_SQL.format(filters=where)
        wide_total = _TOTAL_SQL.format(name="wide", filters=count_filters)
        # S608: only our own SQL fragments; every value is a placeholder.
        total_sql = (
            f"CASE WHEN (SELECT count(*) FROM sel) < %(widen)s THEN {wide_total} "  # noqa: S608
            f"ELSE {total_sql} END"
        )
    sql = _SEARCH_SQL.format(
        selective=_POOL_SQL.format(name="any", filters=where),
        more_pools=more_pools,
        score=(
            " + ".join(score_parts)
            if not LENGTH_B
            else f"({' + '.join(score_parts)}) / (1 - {LENGTH_B} + {LENGTH_B} * "
            f"length(d.tokens) / {AVERAGE_TERMS:.1f})"
        ),
        tx_factor=TRANSACTION_FACTOR,
        frame_factor=FRAME_FACTOR,
        before=WINDOW_BEFORE,
        width=WINDOW_CHARS,
        total=total_sql,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        if rows:
            total = rows[0][-1]
        else:
            cursor.execute(_COUNT_SQL.format(filters=where), params)
            total = cursor.fetchone()[0]
    wanted = [t for t, _ in clauses] + [p for _, ps in clauses for p in ps]
    hits = []
    for (
        score,
        frame_pk,
        _event_pk,
        ref,
        doc_status,
        doc_kind,
        doc_thread,
        created_at,
        frame_id,
        body,
        window,
        cut,
        payload,
        _pooled,
        _total,
    ) in rows:
        if frame_pk is not None:
            body_value = json.loads(body) if body is not None else None
            window, cut = _window(
                textindex.frame_text(frame_id or ref, body_value), params["first"]
            )
        elif payload is not None:
            window, cut = _window(
                textindex.event_text(window or "", json.loads(payload)), params["first"]
            )
        shown = textindex.snippet(window or "", wanted)
        parts = shown["parts"]
        if cut and parts and parts[0]["text"] != "…":
            parts.insert(0, {"text": "…", "match": False})
        hit = search_hit(
            ref,
            frame_pk is not None,
            doc_status,
            doc_kind,
            doc_thread,
            created_at,
            score,
            parts,
        )
        hits.append(hit)
    pooled = rows[0][-2] if rows else 0
    total = max(total, offset + len(hits))
    more = offset + len(hits) < min(pooled, RANK_POOL)
    return {
        "hits": hits,
        "total": min(total, TOTAL_CAP),
        "total_exact": total <= TOTAL_CAP,
        "next_offset": offset + len(hits) if more and hits else None,
        "lag": index_lag(ctx),
        "query": {"q": q, "tokens": [t for t, _ in clauses]},
    }
