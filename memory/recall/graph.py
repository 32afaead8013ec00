"""Graph recall along the cognitive graph (R27–R30, R35, R36).

    recall(context, *, frame_id, depth=1, direction="ancestors", include_bodies=True,
           include_events=False, max_nodes=32, cursor=None, view_version=None,
           evaluation_id=None, as_observation=False, thread=None) -> dict

Returns ``{nodes, edges, next_cursor, version, page}``.

- Walk: breadth-first from `frame_id` (the start node comes first, depth 0), nearest first,
  each node listed once, so cycles terminate. `ancestors` follows a frame's sources (frames
  and events) and relations from subject to object; `descendants` finds frames that cite
  the frame as a source and walks relations from object to subject; `both` is the union.
  Within one parent the order is: sources (as written), outgoing relations, citing frames,
  incoming relations (each by id). Events are leaves. Retired nodes are reachable.
- Nodes: frames ``{type: "frame", id, depth, revision, status, protected, sources, body?,
  retire?}``; events ``{type: "event", ref, depth, kind, thread, size, status, active,
  retired, created_at, preview, content?}`` (`content` only with include_events).
- Edges ``{from, to, kind: "source" | "relation", name}``: every stored edge between a node
  of this page and a node of this or an earlier page (sources point frame -> source,
  relations subject -> object, whatever the direction walked).
- Paging: at most `max_nodes` nodes and about PAGE_BYTES bytes per page, whole nodes only;
  a node larger than the budget comes alone. `next_cursor` is None on the last page.
  Cursors are signed (django.core.signing), bound to the context, the query parameters and
  the cognitive version. A malformed, altered or foreign cursor (other context, other
  parameters) raises InvalidRequest (``invalid_cursor``, 400); a cursor from an earlier
  version raises StaleCursor (``stale_cursor``, 409).
- `view_version` / `evaluation_id`: a recall inside an evaluation whose view is not the
  current version raises StaleView (``stale_view``).
- `as_observation`: the page is also appended as a `recall_result` observation (R30); the
  result then carries ``observation: {ref, seq}``. No frame or event changes status.
- Errors: InvalidRequest with codes ``invalid_frame_id``, ``invalid_depth``,
  ``invalid_direction``, ``invalid_max_nodes``, ``invalid_flag``, ``unknown_evaluation``;
  NotFound for a frame id this context does not have.

The walk and the page are one SQL statement (`_PAGE_SQL`), so one snapshot and one round
trip: a recursive CTE makes one step per level, carrying the visited set in arrays, so each
node is listed once at its first place (nearest first, then parent order, then the order
within the parent); each level is LIMITed to what the page still needs and each parent's
neighbours to a bounded number of rows, so a page costs at most (offset + max_nodes + 1)
discovered nodes, never the whole context. The same statement returns the rows of the
page's candidates, the relations between them and earlier nodes, and the context version.
Later pages continue the walk (memory.recall.walk keeps it in this process, bound to the
version the cursor is bound to, so the graph and the order are the same) and read their
rows in one repeatable-read snapshot; a walk not kept here is walked again from the start,
linearly. Outside a transaction the first page's statement runs prepared (planning it cost
as much as running it).
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from django.core import signing
from django.db import DatabaseError, connection, transaction

from memory.errors import InvalidRequest, NotFound, StaleCursor, StaleView
from memory.limits import (
    RECALL_DEFAULT_DEPTH,
    RECALL_DEFAULT_NODES,
    RECALL_MAX_DEPTH,
    RECALL_MAX_NODES,
)
from memory.models import Context, Evaluation, Event, Frame
from memory.read.history import resolve_context
from memory.recall.walk import state_for as walk_state_for
from memory.shapes import EventNode, event_node
from memory.timeline.events import append_recall_result, check_thread
from memory.vocabulary import seq_of

DIRECTIONS = ("ancestors", "descendants", "both")
PAGE_BYTES = 64 * 1024
PREVIEW_CHARS = 280
NODE_OVERHEAD = 160  # rough JSON size of a node without body/content
PARENT_BATCH = 64
CURSOR_SALT = "morphz.recall.cursor"

Key = tuple[str, int]  # ("f", frame pk) or ("e", event seq)

_PAGE_SQL = """
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


def _json(value: Any) -> Any:
    """jsonb/json columns read through a raw cursor arrive as text."""
    return json.loads(value) if isinstance(value, str) else value


def _check_params(
    frame_id: Any, depth: Any, direction: Any, max_nodes: Any, flags: dict[str, Any]
) -> None:
    if not isinstance(frame_id, str) or not 0 < len(frame_id) <= 128:
        raise InvalidRequest(
            "frame_id must be a frame id string",
            code="invalid_frame_id",
            details=[{"field": "frame_id"}],
        )
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= RECALL_MAX_DEPTH:
        raise InvalidRequest(
            f"depth must be an integer from 1 to {RECALL_MAX_DEPTH}; got {depth!r}",
            code="invalid_depth",
            details=[{"field": "depth", "min": 1, "max": RECALL_MAX_DEPTH}],
        )
    if direction not in DIRECTIONS:
        raise InvalidRequest(
            f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}",
            code="invalid_direction",
            details=[{"field": "direction", "allowed": list(DIRECTIONS)}],
        )
    if (
        isinstance(max_nodes, bool)
        or not isinstance(max_nodes, int)
        or not 1 <= max_nodes <= RECALL_MAX_NODES
    ):
        raise InvalidRequest(
            f"max_nodes must be an integer from 1 to {RECALL_MAX_NODES}; got {max_nodes!r}",
            code="invalid_max_nodes",
            details=[{"field": "max_nodes", "min": 1, "max": RECALL_MAX_NODES}],
        )
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise InvalidRequest(
                f"{name} must be true or false", code="invalid_flag", details=[{"field": name}]
            )


_PARAM_TYPES = {
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


def _run_prepared(name: str, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Run the page statement as a server-side prepared statement (PREPARE once per database
    session, then EXECUTE). Planning it costs about as much as running it (0.6 of 1.1 ms on
    the benchmark graph), which alone kept recall well behind one hand-written query.
    Inside a transaction block it runs unprepared: a missing prepared statement there would
    abort the caller's transaction."""
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            cursor.execute(sql, params)
            return cursor.fetchall()
        names = list(_PARAM_TYPES)
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
                types = ", ".join(_PARAM_TYPES[n] for n in names)
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


@dataclass
class _Walk:
    """The walk up to the end of the requested page, as one statement returned it."""

    version: int
    order: list[Key] = field(default_factory=list)
    depth: dict[Key, int] = field(default_factory=dict)
    frame_id: dict[int, str] = field(default_factory=dict)
    sources: dict[int, list[Any]] = field(default_factory=dict)
    pk_by_id: dict[str, int] = field(default_factory=dict)
    frames: dict[int, dict[str, Any]] = field(default_factory=dict)  # page candidates
    events: dict[int, dict[str, Any]] = field(default_factory=dict)  # page candidates
    relations: list[tuple[int, int, str, int]] = field(default_factory=list)


def _walk(
    context_pk: int,
    root: str,
    direction: str,
    depth: int,
    offset: int,
    max_nodes: int,
    include_bodies: bool,
    include_events: bool,
    budget: int,
) -> _Walk | None:
    """One statement, one snapshot: the breadth-first walk (one recursive step per level,
    carrying the visited set, LIMITed to the first offset + max_nodes + 1 nodes), the rows
    of the page's candidates, the relations between them and the earlier nodes, and the
    context version. None when the root frame does not exist."""
    ancestors = direction in ("ancestors", "both")
    descendants = direction in ("descendants", "both")
    parts = ([_SOURCES, _OUT_RELATIONS] if ancestors else []) + (
        [_CITING_FRAMES, _IN_RELATIONS] if descendants else []
    )
    sql = _PAGE_SQL.format(
        parts="\n          UNION ALL\n          ".join(parts),
        # Only `descendants` needs the frame ids of a level (to find frames citing them).
        fids=_FIDS if descendants else "array_fill(NULL::text, ARRAY[count(*)::int])",
        fid_join=_FID_JOIN if descendants else "",
    )
    target = offset + max_nodes + 1
    params: dict[str, Any] = {
        "ctx": context_pk,
        "root": root,
        "depth": depth,
        "target": target,
        "cap": max(64, 2 * target),
        "lo": offset,
        "hi": offset + max_nodes,
        "budget": budget,
        "bodies": include_bodies,
        "contents": include_events,
        "preview": PREVIEW_CHARS,
    }
    rows = _run_prepared(f"morphz_recall_{direction}", sql, params)
    # The version row comes first (n = -1).
    last = rows.pop(0)
    walk = _Walk(version=last[3])
    walk.relations = [(r[0], r[1], r[2], r[3]) for r in _json(last[5])]
    if not rows:
        return None
    # jsonb/json arrive as text: parse them all with one json.loads (one C-level parse
    # instead of a Python-level call per value, which was most of the time spent here).
    texts: list[str] = []
    for row in rows:
        n, level, kind, pk, fid, sources = row[:6]
        key: Key = (kind, pk)
        walk.order.append(key)
        walk.depth[key] = level
        if kind == "f":
            walk.frame_id[pk] = fid
            walk.pk_by_id[fid] = pk
            texts.append(sources or "[]")
            if offset <= n < offset + max_nodes:
                values = (pk, fid, *row[6:9], sources, *row[9:14])
                frame = dict(zip(_FRAME_COLUMNS, values, strict=True))
                # The size of the sources as JSON text, for the page budget.
                frame["sources_chars"] = len(sources or "[]")
                if frame["body"] is not None:
                    texts.append(frame["body"])
                walk.frames[pk] = frame
        elif offset <= n < offset + max_nodes and row[14] is not None:
            event = dict(zip(_EVENT_COLUMNS, (pk, *row[14:]), strict=True))
            if event["content"] is None:
                event["content"] = _MISSING
            walk.events[pk] = event
    values_iter = iter(json.loads("[" + ",".join(texts) + "]"))
    for kind, pk in walk.order:
        if kind == "f":
            walk.sources[pk] = next(values_iter) or []
            candidate = walk.frames.get(pk)
            if candidate is not None:
                candidate["sources"] = walk.sources[pk]
                has_body = candidate["body"] is not None
                candidate["body"] = next(values_iter) if has_body else _MISSING
    return walk


_PAGE_FRAMES_SQL = """
SELECT id, frame_id, revision, status, protected, sources::text, retire_requested_tick,
       retire_due_tick, retire_reason, octet_length(body::text),
       CASE WHEN %(bodies)s AND octet_length(body::text) <= %(budget)s THEN body::text END
FROM memory_frame WHERE id = ANY(%(ids)s)
"""
_PAGE_EVENTS_SQL = """
SELECT seq, kind, thread, is_observation, active, created_at, left(content, %(preview)s),
       char_length(content), octet_length(content),
       CASE WHEN %(contents)s AND octet_length(content) <= %(budget)s THEN content END
FROM memory_event WHERE context_id = %(ctx)s AND seq = ANY(%(seqs)s)
"""
_PAGE_RELATIONS_SQL = """
SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
WHERE r.subject_id = ANY(%(page)s) AND r.object_id = ANY(%(known)s) AND r.removed_version IS NULL
UNION
SELECT r.id, r.subject_id, r.name, r.object_id FROM memory_relation r
WHERE r.object_id = ANY(%(page)s) AND r.subject_id = ANY(%(known)s) AND r.removed_version IS NULL
ORDER BY 1
"""


def _continue_walk(
    context_pk: int, version: int, qhash: str, query: _Query, offset: int
) -> _Walk | None:
    """A later page from the walk kept in this process (memory.recall.walk), continued as
    far as this page needs, with its rows read in the caller's snapshot. Same result as
    `_walk` for the same offset; None when the root frame does not exist."""
    root = (
        Frame.objects.filter(context_id=context_pk, frame_id=query.frame_id)
        .values_list("pk", flat=True)
        .first()
    )
    if root is None:
        return None
    target = offset + query.max_nodes + 1
    state = walk_state_for(
        (context_pk, version, qhash, query.direction, query.depth),
        root,
        query.direction,
        query.depth,
    )
    with state.lock:
        state.walk_until(context_pk, target, expanded=offset + query.max_nodes)
        order = state.order[:target]
        known = order[: offset + query.max_nodes]
        state.load_frames([pk for kind, pk in known if kind == "f"])
        walk = _Walk(
            version=version,
            order=order,
            depth=dict(state.depth),
            frame_id=dict(state.frame_id),
            sources=dict(state.sources),
            pk_by_id=dict(state.pk_by_id),
        )
    candidates = order[offset : offset + query.max_nodes]
    frame_pks = [pk for kind, pk in candidates if kind == "f"]
    seqs = [pk for kind, pk in candidates if kind == "e"]
    params: dict[str, Any] = {
        "ctx": context_pk,
        "ids": frame_pks,
        "seqs": seqs,
        "bodies": query.include_bodies,
        "contents": query.include_events,
        "budget": query.page_bytes,
        "preview": PREVIEW_CHARS,
        "page": frame_pks,
        "known": [pk for kind, pk in known if kind == "f"],
    }
    with connection.cursor() as cursor:
        cursor.execute(_PAGE_FRAMES_SQL, params)
        for row in cursor.fetchall():
            frame = dict(zip(_FRAME_COLUMNS, row, strict=True))
            frame["sources_chars"] = len(frame["sources"] or "[]")
            frame["sources"] = json.loads(frame["sources"] or "[]")
            frame["body"] = json.loads(frame["body"]) if frame["body"] is not None else _MISSING
            walk.frames[frame["pk"]] = frame
        if seqs:
            cursor.execute(_PAGE_EVENTS_SQL, params)
            for row in cursor.fetchall():
                event = dict(zip(_EVENT_COLUMNS, row, strict=True))
                if event["content"] is None:
                    event["content"] = _MISSING
                walk.events[event["seq"]] = event
        if frame_pks:
            cursor.execute(_PAGE_RELATIONS_SQL, params)
            walk.relations = [(r[0], r[1], r[2], r[3]) for r in cursor.fetchall()]
    return walk


def _params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:32]


def _bad_cursor(message: str, reason: str) -> InvalidRequest:
    """Malformed, altered or foreign cursors are the caller's input: 400 `invalid_cursor`
    (like the lists); only an outdated one is 409 `stale_cursor`."""
    return InvalidRequest(
        message, code="invalid_cursor", details=[{"field": "cursor", "reason": reason}]
    )


def _read_cursor(cursor: Any, context_pk: int, qhash: str) -> int:
    """The offset a cursor stands for; its version is checked against the walk's snapshot
    by `_check_cursor_version`."""
    if not isinstance(cursor, str):
        raise _bad_cursor("cursor must be the string a previous page returned", "malformed")
    try:
        data = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature:
        raise _bad_cursor(
            "this cursor was not issued by this server or was altered; start the recall again",
            "bad_signature",
        ) from None
    if not isinstance(data, dict) or data.get("c") != context_pk:
        raise _bad_cursor("this cursor belongs to another context", "other_context")
    if data.get("q") != qhash:
        raise _bad_cursor(
            "this cursor was issued for other recall parameters; send the same parameters or start again",
            "other_query",
        )
    offset = data.get("o")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 1:
        raise _bad_cursor("malformed cursor", "malformed")
    return offset


def _check_cursor_version(cursor: str, version: int) -> None:
    issued = signing.loads(cursor, salt=CURSOR_SALT).get("v")
    if issued != version:
        raise StaleCursor(
            f"the context changed since this cursor was issued (version {issued} -> "
            f"{version}); start the recall again",
            details=[{"reason": "version_changed", "cursor_version": issued, "version": version}],
        )


def _version(context_pk: int) -> int:
    return Context.objects.values_list("version", flat=True).get(pk=context_pk)


def _check_view(context_pk: int, version: int, view_version: Any, evaluation_id: Any) -> None:
    if view_version is not None:
        if isinstance(view_version, bool) or not isinstance(view_version, int):
            raise InvalidRequest("view_version must be an integer", code="invalid_view_version")
        if view_version != version:
            raise StaleView(
                f"this view is version {view_version} but the context is at version {version}; "
                "evaluate again before recalling",
                details=[{"view_version": view_version, "version": version}],
            )
    if evaluation_id is not None:
        evaluation = (
            Evaluation.objects.filter(pk=evaluation_id, context_id=context_pk)
            .only("view_version")
            .first()
        )
        if evaluation is None:
            raise InvalidRequest(
                f"evaluation {evaluation_id} does not belong to this context",
                code="unknown_evaluation",
            )
        if evaluation.view_version != version:
            raise StaleView(
                f"evaluation {evaluation_id} saw version {evaluation.view_version} but the context is at "
                f"version {version}; evaluate again before recalling",
                details=[{"view_version": evaluation.view_version, "version": version}],
            )


_FRAME_COLUMNS = (
    "pk",
    "frame_id",
    "revision",
    "status",
    "protected",
    "sources",
    "retire_requested_tick",
    "retire_due_tick",
    "retire_reason",
    "body_bytes",
    "body",
)
_EVENT_COLUMNS = (
    "seq",
    "kind",
    "thread",
    "is_observation",
    "active",
    "created_at",
    "preview",
    "chars",
    "content_bytes",
    "content",
)


_MISSING: Any = object()


def _node_bytes(
    key: Key,
    frames: dict[int, dict[str, Any]],
    events: dict[int, dict[str, Any]],
    include_bodies: bool,
    include_events: bool,
) -> int:
    if key[0] == "f":
        row = frames[key[1]]
        return NODE_OVERHEAD + row["sources_chars"] + (row["body_bytes"] if include_bodies else 0)
    row = events[key[1]]
    text_bytes = row["content_bytes"] if include_events else len(row["preview"].encode())
    return NODE_OVERHEAD + text_bytes


def _frame_node(row: dict[str, Any], depth: int, body: Any, include_bodies: bool) -> dict[str, Any]:
    node: dict[str, Any] = {
        "type": "frame",
        "id": row["frame_id"],
        "depth": depth,
        "revision": row["revision"],
        "status": row["status"],
        "protected": row["protected"],
        "sources": row["sources"],
    }
    if include_bodies:
        node["body"] = body
    if row["status"] == "retiring":
        node["retire"] = {
            "requested_tick": row["retire_requested_tick"],
            "due_tick": row["retire_due_tick"],
            "reason": row["retire_reason"],
        }
    return node


def _edges(walk: _Walk, end: int, page: list[Key]) -> list[dict[str, Any]]:
    """Stored edges between a page node and a node of this or an earlier page."""
    known = walk.order[:end]
    known_set, page_set = set(known), set(page)
    edges: list[dict[str, Any]] = []
    for kind, pk in known:
        if kind != "f":
            continue
        for ref in walk.sources.get(pk, []):
            if not isinstance(ref, str):
                continue
            seq = seq_of(ref)
            target: Key | None
            if seq is not None:
                target = ("e", seq)
            else:
                other = walk.pk_by_id.get(ref)
                target = ("f", other) if other is not None else None
            if target in known_set and (("f", pk) in page_set or target in page_set):
                edges.append({"from": walk.frame_id[pk], "to": ref, "kind": "source", "name": None})
    # The statement returned the relations of every candidate; keep the page's.
    for _id, subject, name, obj in walk.relations:
        ends = (("f", subject), ("f", obj))
        if all(k in known_set for k in ends) and any(k in page_set for k in ends):
            edges.append(
                {
                    "from": walk.frame_id[subject],
                    "to": walk.frame_id[obj],
                    "kind": "relation",
                    "name": name,
                }
            )
    return edges


def _render(result: dict[str, Any], root: str) -> str:
    """The recall as prompt text, for the observation the model reads next (R30)."""
    lines = [
        f"[recall from {root} {result['direction']} depth {result['depth']}, version {result['version']}]"
    ]
    for node in result["nodes"]:
        if node["type"] == "frame":
            line = (
                f"- frame {node['id']} r{node['revision']} {node['status']} (depth {node['depth']})"
            )
            if node["sources"]:
                line += f" from {' '.join(str(s) for s in node['sources'])}"
            lines.append(line)
            if "body" in node:
                lines.append("  " + json.dumps(node["body"], ensure_ascii=False))
        else:
            lines.append(
                f"- event {node['ref']} {node['kind']} {node['status']} {node['size']} chars (depth {node['depth']})"
            )
            lines.append("  " + (node.get("content") or node["preview"]).replace("\n", "\n  "))
    for edge in result["edges"]:
        label = edge["name"] if edge["kind"] == "relation" else "source"
        lines.append(f"- edge {edge['from']} -{label}-> {edge['to']}")
    if result["next_cursor"]:
        lines.append("(more nodes: recall again with next_cursor)")
    return "\n".join(lines)


def recall(
    context: Context | int,
    *,
    frame_id: str,
    depth: int = RECALL_DEFAULT_DEPTH,
    direction: str = "ancestors",
    include_bodies: bool = True,
    include_events: bool = False,
    max_nodes: int = RECALL_DEFAULT_NODES,
    cursor: str | None = None,
    view_version: int | None = None,
    evaluation_id: int | None = None,
    as_observation: bool = False,
    thread: str | None = None,
    page_bytes: int = PAGE_BYTES,
) -> dict[str, Any]:
    """One page of a breadth-first walk of the cognitive graph (see the module docstring)."""
    flags = {
        "include_bodies": include_bodies,
        "include_events": include_events,
        "as_observation": as_observation,
    }
    _check_params(frame_id, depth, direction, max_nodes, flags)
    if as_observation:
        thread = check_thread(thread)
    ctx = resolve_context(context)
    query = _Query(
        frame_id, depth, direction, include_bodies, include_events, max_nodes, page_bytes
    )
    # The walk, the page and the version come from one statement, hence one snapshot; only a
    # page holding a node too big to prefetch needs a second read, and then the whole page is
    # made again in a repeatable-read transaction so both reads see the same version.
    result = None
    if not connection.in_atomic_block and cursor is None:
        result = _recall(ctx.pk, query, cursor, view_version, evaluation_id, second_read=False)
    if result is None:
        if connection.in_atomic_block:
            result = _recall(ctx.pk, query, cursor, view_version, evaluation_id, second_read=True)
        else:
            with transaction.atomic():
                with connection.cursor() as c:
                    c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                result = _recall(
                    ctx.pk, query, cursor, view_version, evaluation_id, second_read=True
                )
    assert result is not None
    if as_observation:
        event = append_recall_result(
            ctx.pk, content=_render(result, frame_id), payload=result, thread=thread
        )
        result["observation"] = {"ref": event.ref, "seq": event.seq}
    return result


@dataclass(frozen=True)
class _Query:
    frame_id: str
    depth: int
    direction: str
    include_bodies: bool
    include_events: bool
    max_nodes: int
    page_bytes: int


def _recall(
    context_pk: int,
    query: _Query,
    cursor: str | None,
    view_version: int | None,
    evaluation_id: int | None,
    *,
    second_read: bool,
) -> dict[str, Any] | None:
    """The page, or None when it needs a second read and `second_read` is not allowed."""
    params = {
        "frame_id": query.frame_id,
        "depth": query.depth,
        "direction": query.direction,
        "include_bodies": query.include_bodies,
        "include_events": query.include_events,
        "max_nodes": query.max_nodes,
    }
    qhash = _params_hash(params)
    offset = _read_cursor(cursor, context_pk, qhash) if cursor is not None else 0
    include_bodies, include_events = query.include_bodies, query.include_events
    if cursor is None:
        walk = _walk(
            context_pk,
            query.frame_id,
            query.direction,
            query.depth,
            offset,
            query.max_nodes,
            include_bodies,
            include_events,
            query.page_bytes,
        )
        version = walk.version if walk is not None else _version(context_pk)
        _check_view(context_pk, version, view_version, evaluation_id)
    else:
        # Pages after the first run in one repeatable-read snapshot (see `recall`).
        version = _version(context_pk)
        _check_view(context_pk, version, view_version, evaluation_id)
        _check_cursor_version(cursor, version)
        walk = _continue_walk(context_pk, version, qhash, query, offset)
    if walk is None:
        raise NotFound(
            f"frame {query.frame_id!r} does not exist in this context",
            details=[{"ref": query.frame_id}],
        )

    frames, events = walk.frames, walk.events
    candidates = walk.order[offset : offset + query.max_nodes]
    page: list[Key] = []
    used = 0
    for key in candidates:
        if (key[0] == "f" and key[1] not in frames) or (key[0] == "e" and key[1] not in events):
            continue  # a source naming an event that does not exist: nothing to show
        size = _node_bytes(key, frames, events, include_bodies, include_events)
        if page and used + size > query.page_bytes:
            break
        page.append(key)
        used += size
    if not page and candidates:
        page = candidates[:1]
    end = offset + (walk.order.index(page[-1]) - offset + 1 if page else len(candidates))

    big_bodies = [k[1] for k in page if k[0] == "f" and frames[k[1]]["body"] is _MISSING]
    big_texts = [k[1] for k in page if k[0] == "e" and events[k[1]]["content"] is _MISSING]
    if (include_bodies and big_bodies) or (include_events and big_texts):
        if not second_read:
            return None
        for pk, body in Frame.objects.filter(pk__in=big_bodies).values_list("pk", "body"):
            frames[pk]["body"] = body
        texts = Event.objects.filter(context_id=context_pk, seq__in=big_texts)
        for seq, content in texts.values_list("seq", "content"):
            events[seq]["content"] = content
    nodes: list[dict[str, Any] | EventNode] = []
    for key in page:
        if key[0] == "f" and key[1] in frames:
            row = frames[key[1]]
            nodes.append(_frame_node(row, walk.depth[key], row["body"], include_bodies))
        elif key[0] == "e" and key[1] in events:
            row = events[key[1]]
            text = row["content"] if include_events else None
            preview = row["preview"] + ("…" if row["chars"] > PREVIEW_CHARS else "")
            nodes.append(event_node(row, walk.depth[key], preview, text))
    more = len(walk.order) > end
    next_cursor = (
        signing.dumps({"c": context_pk, "v": version, "q": qhash, "o": end}, salt=CURSOR_SALT)
        if more
        else None
    )
    return {
        "nodes": nodes,
        "edges": _edges(walk, end, page),
        "next_cursor": next_cursor,
        "version": version,
        "frame_id": query.frame_id,
        "depth": query.depth,
        "direction": query.direction,
        "page": {"offset": offset, "count": len(nodes), "bytes": used},
    }
