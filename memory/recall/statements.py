"""The SQL of recall: the one statement that walks and reads a first page, the three reads of
a later page, and running the first prepared.

How it works: docs/internals.md, section `memory/recall/statements.py`."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from django.db import DatabaseError, connection

_FIRST_PAGE_SQL = """
WITH RECURSIVE walk(level, kinds, ids, fids, seen_f, seen_e, total) AS (
  SELECT 0, ARRAY['f'], ARRAY[f.id], ARRAY[f.frame_id::text], ARRAY[f.id], '{{}}'::bigint[], 1
  FROM memory_frame f WHERE f.context_id = %(ctx)s AND f.frame_id = %(root)s
  UNION ALL
  SELECT w.level + 1, nx.kinds, nx.ids, nx.fids, w.seen_f || coalesce(nx.new_f, '{{}}'),
         w.seen_e || coalesce(nx.new_e, '{{}}'), w.total + cardinality(nx.ids)
  FROM walk w
  CROSS JOIN LATERAL (
    SELECT array_agg(c.kind ORDER BY c.pos, c.grp, c.ord) AS kinds,
           array_agg(c.other ORDER BY c.pos, c.grp, c.ord) AS ids,
           {fids} AS fids,
           array_agg(c.other) FILTER (WHERE c.kind = 'f') AS new_f,
           array_agg(c.other) FILTER (WHERE c.kind = 'e') AS new_e
    FROM (
      SELECT u.* FROM (
        -- each new node once, at its first place in the walk order
        SELECT DISTINCT ON (n.kind, n.other) n.kind, n.other, p.pos, n.grp, n.ord
        FROM unnest(w.ids, w.kinds, w.fids) WITH ORDINALITY AS p(pk, kind, fid, pos)
        CROSS JOIN LATERAL (
          {parts}
        ) AS n
        WHERE p.kind = 'f'
        ORDER BY n.kind, n.other, p.pos, n.grp, n.ord
      ) AS u
      ORDER BY u.pos, u.grp, u.ord
      LIMIT %(target)s - w.total
    ) AS c
    {fid_join}
  ) AS nx
  WHERE w.level < %(depth)s AND w.total < %(target)s AND nx.ids IS NOT NULL
),
nodes AS (
  SELECT row_number() OVER (ORDER BY w.level, u.i) - 1 AS n, w.level, u.kind, u.id
  FROM walk w CROSS JOIN LATERAL unnest(w.kinds, w.ids) WITH ORDINALITY AS u(kind, id, i)
),
page_frames AS (SELECT id FROM nodes WHERE kind = 'f' AND n >= %(lo)s AND n < %(hi)s),
known_frames AS (SELECT id FROM nodes WHERE kind = 'f' AND n < %(hi)s),
page_events AS (
  SELECT * FROM memory_event WHERE context_id = %(ctx)s
  AND seq = ANY(ARRAY(SELECT id FROM nodes WHERE kind = 'e' AND n >= %(lo)s AND n < %(hi)s))
),
relations AS (
  -- two index scans (live relations by subject, by object), not an OR over both
  SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
  WHERE r.subject_id = ANY(ARRAY(SELECT id FROM page_frames))
    AND r.object_id = ANY(ARRAY(SELECT id FROM known_frames)) AND r.removed_version IS NULL
  UNION
  SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
  WHERE r.object_id = ANY(ARRAY(SELECT id FROM page_frames))
    AND r.subject_id = ANY(ARRAY(SELECT id FROM known_frames)) AND r.removed_version IS NULL
)
SELECT x.n, x.level, x.kind, x.id, f.frame_id, f.sources::text, f.revision, f.status,
       f.protected, f.retire_requested_tick, f.retire_due_tick, f.retire_reason,
       CASE WHEN x.n >= %(lo)s THEN octet_length(f.body::text) END,
       CASE WHEN x.n >= %(lo)s AND %(bodies)s AND octet_length(f.body::text) <= %(budget)s
            THEN f.body::text END,
       e.kind, e.thread, e.is_observation, e.active, e.created_at, left(e.content, %(preview)s),
       char_length(e.content), octet_length(e.content),
       CASE WHEN %(contents)s AND octet_length(e.content) <= %(budget)s THEN e.content END
FROM nodes x
LEFT JOIN memory_frame f ON x.kind = 'f' AND f.id = x.id
LEFT JOIN page_events e ON x.kind = 'e' AND e.seq = x.id
UNION ALL
-- one last row (n = -1): the cognitive version of this snapshot and the relation edges
SELECT -1, NULL, NULL, c.version, NULL,
       (SELECT coalesce(json_agg(json_build_array(r.id, r.subject_id, r.name, r.object_id)
                                 ORDER BY r.id), '[]')::text FROM relations r),
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL
FROM memory_context c WHERE c.id = %(ctx)s
ORDER BY 1
"""
_FIDS = "array_agg(nf.frame_id::text ORDER BY c.pos, c.grp, c.ord)"
_FID_JOIN = "LEFT JOIN memory_frame nf ON c.kind = 'f' AND nf.id = c.other"
# Group numbers fix the order of neighbours within one parent; each part skips nodes already
# seen on earlier levels and is LIMITed, so a parent with a huge fan-out costs at most `cap`
# rows. `p` is the parent (pk, frame id), `w` the walk so far.
_SOURCES = """(SELECT 0 AS grp, s.i AS ord, k.kind, k.other
   FROM memory_frame src
   CROSS JOIN LATERAL jsonb_array_elements_text(src.sources) WITH ORDINALITY AS s(ref, i)
   CROSS JOIN LATERAL (SELECT s.ref ~ '^@e[0-9]+$') AS t(is_event)
   -- LIMIT keeps this a per-source index lookup whatever the statistics say (a join here
   -- became a hash of the whole frame table while a freshly loaded table had no statistics)
   LEFT JOIN LATERAL (
     SELECT f2.id FROM memory_frame f2
     WHERE NOT t.is_event AND f2.context_id = %(ctx)s AND f2.frame_id = s.ref LIMIT 1
   ) AS f2 ON true
   CROSS JOIN LATERAL (SELECT CASE WHEN t.is_event THEN 'e' ELSE 'f' END,
                              CASE WHEN t.is_event THEN substr(s.ref, 3)::bigint ELSE f2.id END
                      ) AS k(kind, other)
   WHERE src.id = p.pk AND k.other IS NOT NULL
     AND k.other <> ALL(CASE WHEN k.kind = 'f' THEN w.seen_f ELSE w.seen_e END)
   ORDER BY s.i LIMIT %(cap)s)"""
_OUT_RELATIONS = """(SELECT 1 AS grp, r.id AS ord, 'f' AS kind, r.object_id AS other
   FROM memory_relation r
   WHERE r.subject_id = p.pk AND r.removed_version IS NULL AND r.object_id <> ALL(w.seen_f)
   ORDER BY r.id LIMIT %(cap)s)"""
_CITING_FRAMES = """(SELECT 2 AS grp, f.id AS ord, 'f' AS kind, f.id AS other FROM memory_frame f
   WHERE f.context_id = %(ctx)s AND f.sources ? p.fid AND f.id <> ALL(w.seen_f)
   ORDER BY f.id LIMIT %(cap)s)"""
_IN_RELATIONS = """(SELECT 3 AS grp, r.id AS ord, 'f' AS kind, r.subject_id AS other
   FROM memory_relation r
   WHERE r.object_id = p.pk AND r.removed_version IS NULL AND r.subject_id <> ALL(w.seen_f)
   ORDER BY r.id LIMIT %(cap)s)"""


def first_page_sql(direction: str) -> str:
    """The first-page statement for one direction (`ancestors`, `descendants` or `both`)."""
    ancestors = direction in ("ancestors", "both")
    descendants = direction in ("descendants", "both")
    parts = ([_SOURCES, _OUT_RELATIONS] if ancestors else []) + (
        [_CITING_FRAMES, _IN_RELATIONS] if descendants else []
    )
    return _FIRST_PAGE_SQL.format(
        parts="\n          UNION ALL\n          ".join(parts),
        # Only `descendants` needs the frame ids of a level (to find frames citing them).
        fids=_FIDS if descendants else "array_fill(NULL::text, ARRAY[count(*)::int])",
        fid_join=_FID_JOIN if descendants else "",
    )


PAGE_FRAMES_SQL = """
SELECT id, frame_id, revision, status, protected, sources::text, retire_requested_tick,
       retire_due_tick, retire_reason, octet_length(body::text),
       CASE WHEN %(bodies)s AND octet_length(body::text) <= %(budget)s THEN body::text END
FROM memory_frame WHERE id = ANY(%(ids)s)
"""
PAGE_EVENTS_SQL = """
SELECT seq, kind, thread, is_observation, active, created_at, left(content, %(preview)s),
       char_length(content), octet_length(content),
       CASE WHEN %(contents)s AND octet_length(content) <= %(budget)s THEN content END
FROM memory_event WHERE context_id = %(ctx)s AND seq = ANY(%(seqs)s)
"""
PAGE_RELATIONS_SQL = """
SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
WHERE r.subject_id = ANY(%(page)s) AND r.object_id = ANY(%(known)s) AND r.removed_version IS NULL
UNION
SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
WHERE r.object_id = ANY(%(page)s) AND r.subject_id = ANY(%(known)s) AND r.removed_version IS NULL
ORDER BY 1
"""


PARAM_TYPES = {
    "ctx": "bigint",
    "root": "text",
    "depth": "int",
    "target": "int",
    "cap": "int",
    "lo": "int",
    "hi": "int",
    "budget": "int",
    "bodies": "boolean",
    "contents": "boolean",
    "preview": "int",
}
_prepared: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_prepared_lock = threading.Lock()


def run_prepared(name: str, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Run the page statement as a server-side prepared statement (PREPARE once per database
    session, then EXECUTE). Planning it costs about as much as running it (0.6 of 1.1 ms on
    the benchmark graph), which alone kept recall well behind one hand-written query.
    Inside a transaction block it runs unprepared: a missing prepared statement there would
    abort the caller's transaction."""
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            cursor.execute(sql, params)
            return cursor.fetchall()
        names = list(PARAM_TYPES)
        raw = connection.connection
        with _prepared_lock:
            done = _prepared.setdefault(raw, set())
        args = [params[n] for n in names]
        execute = f"EXECUTE {name} ({', '.join(['%s'] * len(names))})"
        for attempt in (1, 2):
            if name not in done:
                text = sql
                for index, param in enumerate(names, start=1):
                    text = text.replace(f"%({param})s", f"${index}")
                types = ", ".join(PARAM_TYPES[n] for n in names)
                try:
                    cursor.execute(f"PREPARE {name} ({types}) AS {text}")
                except DatabaseError as exc:
                    if getattr(exc.__cause__, "sqlstate", None) != "42P05":  # already there
                        raise
                done.add(name)
            try:
                cursor.execute(execute, args)
            except DatabaseError as exc:
                # Someone ran DEALLOCATE/DISCARD on this session: prepare again, once.
                if attempt == 2 or getattr(exc.__cause__, "sqlstate", None) != "26000":
                    raise
                done.discard(name)
                continue
            return cursor.fetchall()
    raise AssertionError("unreachable")
