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
  the cognitive version; anything else raises StaleCursor (code ``stale_cursor``).
- `view_version` / `evaluation_id`: a recall inside an evaluation whose view is not the
  current version raises StaleView (``stale_view``).
- `as_observation`: the page is also appended as a `recall_result` observation (R30); the
  result then carries ``observation: {ref, seq}``. No frame or event changes status.
- Errors: InvalidRequest with codes ``invalid_frame_id``, ``invalid_depth``,
  ``invalid_direction``, ``invalid_max_nodes``, ``invalid_flag``, ``unknown_evaluation``;
  NotFound for a frame id this context does not have.

The walk runs in bounded batches of SQL (one query per batch of parents, with per-parent
LIMITs), so a page costs at most (offset + max_nodes) discovered nodes, never the whole
context. Later pages recompute the walk up to their offset: the graph is frozen by the
version the cursor is bound to, so the order is the same.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core import signing
from django.db import connection, transaction

from memory.errors import InvalidRequest, NotFound, StaleCursor, StaleView
from memory.events import EVENT_REF_RE, append_recall_result, check_thread
from memory.history import event_status, resolve_context
from memory.models import Context, Evaluation, Event, Frame

DIRECTIONS = ("ancestors", "descendants", "both")
MAX_DEPTH = 4
MAX_NODES = 128
PAGE_BYTES = 64 * 1024
PREVIEW_CHARS = 280
NODE_OVERHEAD = 160  # rough JSON size of a node without body/content
PARENT_BATCH = 64
CURSOR_SALT = "morphz.recall.cursor"

Key = tuple[str, int]  # ("f", frame pk) or ("e", event seq)

_NEIGHBOURS_SQL = """
SELECT n.pos, n.kind, n.other, nf.frame_id, nf.sources
FROM (
  SELECT p.pos, n.grp, n.ord, n.kind, n.other
  FROM unnest(%(pks)s::bigint[], %(fids)s::text[]) WITH ORDINALITY AS p(pk, fid, pos)
  CROSS JOIN LATERAL (
    {parts}
  ) AS n
  WHERE n.other IS NOT NULL
  ORDER BY p.pos, n.grp, n.ord
  LIMIT %(cap)s
) AS n
LEFT JOIN memory_frame nf ON n.kind = 'f' AND nf.id = n.other
ORDER BY n.pos, n.grp, n.ord
"""
# Group numbers fix the order of neighbours within one parent; each part is LIMITed so a
# parent with a huge fan-out costs at most `cap` rows.
_SOURCES = """(SELECT 0 AS grp, s.i AS ord,
     CASE WHEN s.ref ~ '^@e[0-9]+$' THEN 'e' ELSE 'f' END AS kind,
     CASE WHEN s.ref ~ '^@e[0-9]+$' THEN substr(s.ref, 3)::bigint
          ELSE (SELECT f2.id FROM memory_frame f2
                WHERE f2.context_id = %(ctx)s AND f2.frame_id = s.ref) END AS other
   FROM memory_frame src, jsonb_array_elements_text(src.sources) WITH ORDINALITY AS s(ref, i)
   WHERE src.id = p.pk ORDER BY s.i LIMIT %(cap)s)"""
_OUT_RELATIONS = """(SELECT 1 AS grp, r.id AS ord, 'f' AS kind, r.object_id AS other
   FROM memory_relation r
   WHERE r.subject_id = p.pk AND r.removed_version IS NULL ORDER BY r.id LIMIT %(cap)s)"""
_CITING_FRAMES = """(SELECT 2 AS grp, f.id AS ord, 'f' AS kind, f.id AS other FROM memory_frame f
   WHERE f.context_id = %(ctx)s AND f.sources ? p.fid ORDER BY f.id LIMIT %(cap)s)"""
_IN_RELATIONS = """(SELECT 3 AS grp, r.id AS ord, 'f' AS kind, r.subject_id AS other
   FROM memory_relation r
   WHERE r.object_id = p.pk AND r.removed_version IS NULL ORDER BY r.id LIMIT %(cap)s)"""


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
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidRequest(
            f"depth must be an integer from 1 to {MAX_DEPTH}; got {depth!r}",
            code="invalid_depth",
            details=[{"field": "depth", "min": 1, "max": MAX_DEPTH}],
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
        or not 1 <= max_nodes <= MAX_NODES
    ):
        raise InvalidRequest(
            f"max_nodes must be an integer from 1 to {MAX_NODES}; got {max_nodes!r}",
            code="invalid_max_nodes",
            details=[{"field": "max_nodes", "min": 1, "max": MAX_NODES}],
        )
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise InvalidRequest(
                f"{name} must be true or false", code="invalid_flag", details=[{"field": name}]
            )


class _Walk:
    """Breadth-first discovery of the first `target` nodes, in bounded SQL batches."""

    def __init__(
        self, context: Context, root_pk: int, root_id: str, root_sources: list[Any], direction: str
    ):
        self.context = context
        self.direction = direction
        self.order: list[Key] = [("f", root_pk)]
        self.depth: dict[Key, int] = {("f", root_pk): 0}
        self.frame_id: dict[int, str] = {root_pk: root_id}
        self.sources: dict[int, list[Any]] = {root_pk: list(root_sources or [])}
        self.pk_by_id: dict[str, int] = {root_id: root_pk}

    def run(self, max_depth: int, target: int) -> None:
        frontier = [self.order[0][1]]
        level = 0
        while frontier and level < max_depth and len(self.order) < target:
            following: list[int] = []
            for start in range(0, len(frontier), PARENT_BATCH):
                need = target - len(self.order)
                if need <= 0:
                    break
                for key in self._expand(frontier[start : start + PARENT_BATCH], need):
                    self.order.append(key)
                    self.depth[key] = level + 1
                    if key[0] == "f":
                        following.append(key[1])
            frontier = following
            level += 1

    def _expand(self, parents: list[int], need: int) -> list[Key]:
        """New nodes reached from `parents` (in walk order), at least `need` of them when
        that many exist; one query, never more than a bounded number of rows read."""
        ancestors = self.direction in ("ancestors", "both")
        descendants = self.direction in ("descendants", "both")
        parts = ([_SOURCES, _OUT_RELATIONS] if ancestors else []) + (
            [_CITING_FRAMES, _IN_RELATIONS] if descendants else []
        )
        sql = _NEIGHBOURS_SQL.format(parts="\n    UNION ALL\n    ".join(parts))
        cap = max(64, 2 * need)
        while True:
            with connection.cursor() as cursor:
                cursor.execute(
                    sql,
                    {
                        "pks": parents,
                        "fids": [self.frame_id[pk] for pk in parents],
                        "ctx": self.context.pk,
                        "cap": cap,
                    },
                )
                rows = cursor.fetchall()
            # The rows are the first `cap` of the full order (each part is limited to `cap`
            # per parent), so even a truncated answer is a true prefix of the walk.
            truncated = len(rows) >= cap
            seen = set(self.depth)
            new: list[Key] = []
            for _pos, kind, other, fid, sources in rows:
                key: Key = (kind, other)
                if kind == "f" and other not in self.frame_id:
                    self.frame_id[other] = fid
                    self.sources[other] = list(_json(sources) or [])
                    self.pk_by_id[fid] = other
                if key not in seen:
                    seen.add(key)
                    new.append(key)
            if not truncated or len(new) >= need:
                return new
            cap *= 2


def _params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:32]


def _read_cursor(cursor: Any, context: Context, qhash: str) -> int:
    if not isinstance(cursor, str):
        raise StaleCursor(
            "cursor must be the string a previous page returned", details=[{"reason": "malformed"}]
        )
    try:
        data = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature:
        raise StaleCursor(
            "this cursor was not issued by this server or was altered; start the recall again",
            details=[{"reason": "bad_signature"}],
        ) from None
    if not isinstance(data, dict) or data.get("c") != context.pk:
        raise StaleCursor(
            "this cursor belongs to another context", details=[{"reason": "other_context"}]
        )
    if data.get("q") != qhash:
        raise StaleCursor(
            "this cursor was issued for other recall parameters; send the same parameters or start again",
            details=[{"reason": "other_query"}],
        )
    if data.get("v") != context.version:
        raise StaleCursor(
            f"the context changed since this cursor was issued (version {data.get('v')} -> "
            f"{context.version}); start the recall again",
            details=[
                {
                    "reason": "version_changed",
                    "cursor_version": data.get("v"),
                    "version": context.version,
                }
            ],
        )
    offset = data.get("o")
    if not isinstance(offset, int) or offset < 1:
        raise StaleCursor("malformed cursor", details=[{"reason": "malformed"}])
    return offset


def _check_view(context: Context, view_version: Any, evaluation_id: Any) -> None:
    if view_version is not None:
        if isinstance(view_version, bool) or not isinstance(view_version, int):
            raise InvalidRequest("view_version must be an integer", code="invalid_view_version")
        if view_version != context.version:
            raise StaleView(
                f"this view is version {view_version} but the context is at version {context.version}; "
                "evaluate again before recalling",
                details=[{"view_version": view_version, "version": context.version}],
            )
    if evaluation_id is not None:
        evaluation = (
            Evaluation.objects.filter(pk=evaluation_id, context=context)
            .only("view_version")
            .first()
        )
        if evaluation is None:
            raise InvalidRequest(
                f"evaluation {evaluation_id} does not belong to this context",
                code="unknown_evaluation",
            )
        if evaluation.view_version != context.version:
            raise StaleView(
                f"evaluation {evaluation_id} saw version {evaluation.view_version} but the context is at "
                f"version {context.version}; evaluate again before recalling",
                details=[{"view_version": evaluation.view_version, "version": context.version}],
            )


_FRAME_ROWS = """
SELECT id, frame_id, revision, status, protected, sources, retire_requested_tick,
       retire_due_tick, retire_reason, octet_length(body::text),
       CASE WHEN %(bodies)s AND octet_length(body::text) <= %(budget)s THEN body::text END
FROM memory_frame WHERE context_id = %(ctx)s AND id = ANY(%(ids)s)
"""
_EVENT_ROWS = """
SELECT seq, kind, thread, is_observation, active, created_at, left(content, %(preview)s),
       char_length(content), octet_length(content),
       CASE WHEN %(contents)s AND octet_length(content) <= %(budget)s THEN content END
FROM memory_event WHERE context_id = %(ctx)s AND seq = ANY(%(ids)s)
"""
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


def _page_rows(
    context: Context, keys: list[Key], include_bodies: bool, include_events: bool, budget: int
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """Candidate nodes with their sizes; bodies and texts that fit the budget come along
    (bigger ones are read only if they make it onto the page)."""
    frames: dict[int, dict[str, Any]] = {}
    events: dict[int, dict[str, Any]] = {}
    params = {
        "ctx": context.pk,
        "budget": budget,
        "bodies": include_bodies,
        "contents": include_events,
        "preview": PREVIEW_CHARS,
    }
    with connection.cursor() as cursor:
        frame_ids = [k[1] for k in keys if k[0] == "f"]
        if frame_ids:
            cursor.execute(_FRAME_ROWS, {**params, "ids": frame_ids})
            for values in cursor.fetchall():
                row = dict(zip(_FRAME_COLUMNS, values, strict=True))
                row["sources"] = _json(row["sources"]) or []
                row["body"] = _json(row["body"]) if row["body"] is not None else _MISSING
                frames[row["pk"]] = row
        seqs = [k[1] for k in keys if k[0] == "e"]
        if seqs:
            cursor.execute(_EVENT_ROWS, {**params, "ids": seqs})
            for values in cursor.fetchall():
                row = dict(zip(_EVENT_COLUMNS, values, strict=True))
                if row["content"] is None:
                    row["content"] = _MISSING
                events[row["seq"]] = row
    return frames, events


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
        return (
            NODE_OVERHEAD
            + len(json.dumps(row["sources"], ensure_ascii=False))
            + (row["body_bytes"] if include_bodies else 0)
        )
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


def _event_node(row: dict[str, Any], depth: int, content: str | None) -> dict[str, Any]:
    status = event_status(row["is_observation"], row["active"])
    preview = row["preview"] + ("…" if row["chars"] > PREVIEW_CHARS else "")
    node: dict[str, Any] = {
        "type": "event",
        "ref": f"@e{row['seq']}",
        "depth": depth,
        "kind": row["kind"],
        "thread": row["thread"],
        "size": row["chars"],
        "status": status,
        "active": row["active"],
        "retired": status == "retired",
        "created_at": row["created_at"].isoformat(),
        "preview": preview,
    }
    if content is not None:
        node["content"] = content
    return node


_EDGES_SQL = """
SELECT id, subject_id, name, object_id FROM memory_relation
WHERE subject_id = ANY(%(page)s) AND object_id = ANY(%(known)s) AND removed_version IS NULL
UNION
SELECT id, subject_id, name, object_id FROM memory_relation
WHERE object_id = ANY(%(page)s) AND subject_id = ANY(%(known)s) AND removed_version IS NULL
ORDER BY 1
"""


def _edges(walk: _Walk, known: list[Key], page: list[Key]) -> list[dict[str, Any]]:
    """Stored edges between a page node and a node of this or an earlier page."""
    known_set, page_set = set(known), set(page)
    edges: list[dict[str, Any]] = []
    known_frames = [k[1] for k in known if k[0] == "f"]
    page_frames = [k[1] for k in page if k[0] == "f"]
    for pk in known_frames:
        for ref in walk.sources.get(pk, []):
            if not isinstance(ref, str):
                continue
            match = EVENT_REF_RE.match(ref)
            target: Key | None
            if match:
                target = ("e", int(match.group(1)))
            else:
                other = walk.pk_by_id.get(ref)
                target = ("f", other) if other is not None else None
            if target in known_set and (("f", pk) in page_set or target in page_set):
                edges.append({"from": walk.frame_id[pk], "to": ref, "kind": "source", "name": None})
    if page_frames:
        # Two index scans (live relations by subject, by object), not an OR over both.
        with connection.cursor() as cursor:
            cursor.execute(_EDGES_SQL, {"page": page_frames, "known": known_frames})
            relations = cursor.fetchall()
        for _id, subject, name, obj in relations:
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
    depth: int = 1,
    direction: str = "ancestors",
    include_bodies: bool = True,
    include_events: bool = False,
    max_nodes: int = 32,
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
    if connection.in_atomic_block:
        result = _recall(
            ctx.pk,
            frame_id,
            depth,
            direction,
            include_bodies,
            include_events,
            max_nodes,
            cursor,
            view_version,
            evaluation_id,
            page_bytes,
        )
    else:
        # One snapshot for every query of the page, so a concurrent commit cannot mix in.
        with transaction.atomic():
            with connection.cursor() as c:
                c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            result = _recall(
                ctx.pk,
                frame_id,
                depth,
                direction,
                include_bodies,
                include_events,
                max_nodes,
                cursor,
                view_version,
                evaluation_id,
                page_bytes,
            )
    if as_observation:
        event = append_recall_result(
            ctx.pk, content=_render(result, frame_id), payload=result, thread=thread
        )
        result["observation"] = {"ref": event.ref, "seq": event.seq}
    return result


def _recall(
    context_pk: int,
    frame_id: str,
    depth: int,
    direction: str,
    include_bodies: bool,
    include_events: bool,
    max_nodes: int,
    cursor: str | None,
    view_version: int | None,
    evaluation_id: int | None,
    page_bytes: int,
) -> dict[str, Any]:
    ctx = Context.objects.get(pk=context_pk)
    _check_view(ctx, view_version, evaluation_id)
    params = {
        "frame_id": frame_id,
        "depth": depth,
        "direction": direction,
        "include_bodies": include_bodies,
        "include_events": include_events,
        "max_nodes": max_nodes,
    }
    qhash = _params_hash(params)
    offset = _read_cursor(cursor, ctx, qhash) if cursor is not None else 0
    root = Frame.objects.filter(context=ctx, frame_id=frame_id).values_list("pk", "sources").first()
    if root is None:
        raise NotFound(
            f"frame {frame_id!r} does not exist in this context", details=[{"ref": frame_id}]
        )

    walk = _Walk(ctx, root[0], frame_id, root[1], direction)
    walk.run(depth, offset + max_nodes + 1)
    candidates = walk.order[offset : offset + max_nodes]
    frames, events = _page_rows(ctx, candidates, include_bodies, include_events, page_bytes)
    page: list[Key] = []
    used = 0
    for key in candidates:
        if (key[0] == "f" and key[1] not in frames) or (key[0] == "e" and key[1] not in events):
            continue  # a source naming an event that does not exist: nothing to show
        size = _node_bytes(key, frames, events, include_bodies, include_events)
        if page and used + size > page_bytes:
            break
        page.append(key)
        used += size
    if not page and candidates:
        page = candidates[:1]
    end = offset + (walk.order.index(page[-1]) - offset + 1 if page else len(candidates))

    big_bodies = [k[1] for k in page if k[0] == "f" and frames[k[1]]["body"] is _MISSING]
    if include_bodies and big_bodies:
        for pk, body in Frame.objects.filter(pk__in=big_bodies).values_list("pk", "body"):
            frames[pk]["body"] = body
    big_texts = [k[1] for k in page if k[0] == "e" and events[k[1]]["content"] is _MISSING]
    if include_events and big_texts:
        texts = Event.objects.filter(context=ctx, seq__in=big_texts).values_list("seq", "content")
        for seq, content in texts:
            events[seq]["content"] = content
    nodes = []
    for key in page:
        if key[0] == "f" and key[1] in frames:
            row = frames[key[1]]
            nodes.append(_frame_node(row, walk.depth[key], row["body"], include_bodies))
        elif key[0] == "e" and key[1] in events:
            row = events[key[1]]
            text = row["content"] if include_events else None
            nodes.append(_event_node(row, walk.depth[key], text))
    more = len(walk.order) > end
    next_cursor = (
        signing.dumps({"c": ctx.pk, "v": ctx.version, "q": qhash, "o": end}, salt=CURSOR_SALT)
        if more
        else None
    )
    return {
        "nodes": nodes,
        "edges": _edges(walk, walk.order[:end], page),
        "next_cursor": next_cursor,
        "version": ctx.version,
        "frame_id": frame_id,
        "depth": depth,
        "direction": direction,
        "page": {"offset": offset, "count": len(nodes), "bytes": used},
    }
