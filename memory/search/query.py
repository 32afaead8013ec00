"""Lexical search over frames (every status) and events (every kind, retired too) (R33–R36).

    search(context, q, *, type=None, status=None, kind=None, thread=None, since=None,
           until=None, limit=20) -> {hits, lag, query}

- `q` goes through the same pipeline as the indexed text (`memory.search.textindex`: NFKC, case
  folding, ICU word segmentation); every query token must occur in a hit (AND).
- Filters: `type` ``frame`` | ``event``; `status` ``active`` | ``retiring`` | ``retired``
  (frames) or ``active`` | ``retired`` | ``recorded`` (events; ``recorded`` = not an
  observation); `kind` an event kind (frames have kind ``frame``); `thread`; `since` /
  `until` (datetimes or ISO 8601 strings; a frame's time is its last change, an event's
  its creation; `since` inclusive, `until` exclusive).
- Hits, best first: ``{type, id (frames) | ref (events), ref, status, kind, thread,
  created_at, score, snippet, snippet_parts: [{text, match}], next}`` where `next` says what
  to call to go further: ``{"recall": {"frame_id": ...}}`` or ``{"read": "@e42"}``.
- `lag`: ``{pending_intents, oldest_pending_seconds}`` from the outbox (search may lag the
  facts a little; reading a frame or event by id never does, R35).
- Errors: InvalidRequest with codes ``invalid_query`` (empty, too long, or no word),
  ``invalid_type``, ``invalid_status``, ``invalid_kind``, ``invalid_thread``,
  ``invalid_time``, ``invalid_limit``.

Storage (chosen by measurement, see BENCHMARKS.md): a ``tsvector`` per document built from
the ICU tokens (quoted lexemes, PostgreSQL's ``simple`` behaviour: no stemming, no stop
words) with a GIN index, queried with a ``tsquery`` of the AND-ed query tokens. One row per
document keeps upserts idempotent and cheap and lets PostgreSQL intersect posting lists
inside the GIN index; ``ts_rank`` orders the hits, computed for at most RANK_POOL matches
(the newest; all of them when there are fewer) so a frequent word costs a bounded amount.
Documents keep no copy of the text: snippets are cut from the facts (event content in the
database, a frame's flattened body here) for the hits returned.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils.dateparse import parse_datetime

from memory.errors import InvalidRequest
from memory.kinds import EVENT_KINDS, FRAME_STATUSES
from memory.limits import SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MAX_QUERY_CHARS
from memory.models import Context
from memory.read.history import resolve_context
from memory.search import textindex
from memory.search.indexer import index_lag
from memory.vocabulary import is_thread_name

MAX_QUERY_TOKENS = 32
WINDOW_BEFORE = 60
WINDOW_CHARS = 400
STATUSES = (*FRAME_STATUSES, "recorded")

RANK_POOL = 400  # matches ranked per query: the newest ones (all of them for rarer words)

# Ranking reads each candidate's whole tsvector, so it is bounded: the newest RANK_POOL
# matches (by the (context, created_at) index, or a top-N sort of the GIN bitmap, whichever
# the planner prefers) are ranked, not every document holding a frequent word. A query with
# at most RANK_POOL matches is ranked exactly.
_SEARCH_SQL = """
WITH pool AS (
  SELECT d.id, d.tokens, d.created_at
  FROM memory_searchdocument d
  WHERE d.context_id = %(ctx)s AND d.tokens @@ %(query)s::tsquery {filters}
  ORDER BY d.created_at DESC, d.id DESC
  LIMIT %(pool)s
),
hits AS (
  SELECT p.id, ts_rank(p.tokens, %(query)s::tsquery) AS score, p.created_at
  FROM pool p
  ORDER BY score DESC, p.created_at DESC, p.id DESC
  LIMIT %(limit)s
)
SELECT h.score, d.frame_id, d.event_id, d.ref, d.status, d.kind, d.thread, d.created_at,
       f.frame_id, f.body::text, e.window, e.cut, e.payload
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
ORDER BY h.score DESC, d.created_at DESC, d.id DESC
"""


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


def _check(q: Any, type: Any, status: Any, kind: Any, thread: Any, limit: Any) -> list[str]:
    if not isinstance(q, str) or not q.strip() or len(q) > SEARCH_MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"q must be a non-empty query of at most {SEARCH_MAX_QUERY_CHARS} characters",
            code="invalid_query",
            details=[{"field": "q"}],
        )
    query_tokens = list(dict.fromkeys(textindex.tokens(q)))[:MAX_QUERY_TOKENS]
    if not query_tokens:
        raise InvalidRequest(
            "q has no word to search for", code="invalid_query", details=[{"field": "q"}]
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
    return query_tokens


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
    limit: int = SEARCH_DEFAULT_LIMIT,
) -> dict[str, Any]:
    """Ranked hits for `q` in this context, with snippets and the index lag."""
    query_tokens = _check(q, type, status, kind, thread, limit)
    start, end = _time(since, "since"), _time(until, "until")
    ctx = resolve_context(context)
    params: dict[str, Any] = {
        "query": textindex.tsquery_literal(query_tokens),
        "ctx": ctx.pk,
        "limit": limit,
        "pool": RANK_POOL,
        "first": query_tokens[0],
    }
    filters = []
    if type == "frame":
        filters.append("d.frame_id IS NOT NULL")
    elif type == "event":
        filters.append("d.event_id IS NOT NULL")
    for name, value in (("status", status), ("kind", kind), ("thread", thread)):
        if value is not None:
            filters.append(f"d.{name} = %({name})s")
            params[name] = value
    if start is not None:
        filters.append("d.created_at >= %(since)s")
        params["since"] = start
    if end is not None:
        filters.append("d.created_at < %(until)s")
        params["until"] = end
    sql = _SEARCH_SQL.format(
        filters="".join(f" AND {f}" for f in filters), before=WINDOW_BEFORE, width=WINDOW_CHARS
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
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
        shown = textindex.snippet(window or "", query_tokens)
        parts = shown["parts"]
        if cut and parts and parts[0]["text"] != "…":
            parts.insert(0, {"text": "…", "match": False})
        hit: dict[str, Any] = {"type": "frame" if frame_pk is not None else "event"}
        hit["id" if frame_pk is not None else "ref"] = ref
        hit.update(
            {
                "ref": ref,
                "status": doc_status,
                "kind": doc_kind,
                "thread": doc_thread,
                "created_at": created_at.isoformat(),
                "score": round(float(score), 6),
                "snippet": "".join(p["text"] for p in parts),
                "snippet_parts": parts,
                "next": {"recall": {"frame_id": ref}} if frame_pk is not None else {"read": ref},
            }
        )
        hits.append(hit)
    return {"hits": hits, "lag": index_lag(ctx), "query": {"q": q, "tokens": query_tokens}}
