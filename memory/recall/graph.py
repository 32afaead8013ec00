"""Graph recall along the cognitive graph (R27–R30, R35, R36).

How it works: docs/internals.md, section `memory/recall/graph.py`."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection, transaction

from memory.errors import NotFound
from memory.limits import RECALL_DEFAULT_DEPTH, RECALL_DEFAULT_NODES
from memory.models import Context, Event, Frame
from memory.read.history import resolve_context
from memory.recall.checks import (
    check_cursor_version,
    check_params,
    check_view,
    context_version,
    default_direction,
    issue_cursor,
    params_hash,
    read_cursor,
)
from memory.recall.rows import (
    MISSING,
    PREVIEW_CHARS,
    Query,
    Walk,
    continue_walk,
    first_walk,
)
from memory.recall.walk import Key
from memory.shapes import EventNode, FrameNode, event_node, frame_node
from memory.shapes.recall import RecallEdge, RecallJson
from memory.sql import statements
from memory.timeline.events import append_recall_result, check_thread
from memory.vocabulary import seq_of

PAGE_BYTES = 64 * 1024
NODE_OVERHEAD = 160  # rough JSON size of a node without body/content


def root_kind(ref: str) -> str:
    """What a recall starts from, as its messages name it: `event` for an event ref, else
    `frame`."""
    return "event" if seq_of(ref) is not None else "frame"


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


def _edges(walk: Walk, end: int, page: list[Key]) -> list[RecallEdge]:
    """Stored edges between a page node and a node of this or an earlier page."""
    known = walk.order[:end]
    known_set, page_set = set(known), set(page)
    edges: list[RecallEdge] = []
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


def _render(result: RecallJson, root: str) -> str:
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
    direction: str | None = None,
    include_bodies: bool = True,
    include_events: bool = False,
    max_nodes: int = RECALL_DEFAULT_NODES,
    cursor: str | None = None,
    view_version: int | None = None,
    evaluation_id: int | None = None,
    as_observation: bool = False,
    thread: str | None = None,
    page_bytes: int = PAGE_BYTES,
    idempotency_key: str | None = None,
    as_of: int | None = None,
) -> RecallJson:
    """One page of a breadth-first walk of the cognitive graph (see the module docstring):
    `{nodes, edges, next_cursor, version, page: {offset, count, bytes}, ...}`. `frame_id`
    is a frame id or an event ref; no `direction`: `default_direction`. NotFound for an unknown
    root; InvalidRequest (`invalid_*`, `invalid_cursor`), StaleCursor, StaleView. Reads only,
    unless `as_observation` appends the page as an observation (under the context row lock).
    `as_of`: the past version the caller reads the graph at (`memory.versions.asof.
    recall_as_of` sets it); it binds the cursors, so one issued as of a version is refused
    (`invalid_cursor`) without it rather than found stale."""
    flags = {
        "include_bodies": include_bodies,
        "include_events": include_events,
        "as_observation": as_observation,
    }
    direction = default_direction(frame_id) if direction is None else direction
    check_params(frame_id, depth, direction, max_nodes, flags)
    if as_observation:
        thread = check_thread(thread)
    ctx = resolve_context(context)
    query = Query(
        frame_id, depth, direction, include_bodies, include_events, max_nodes, page_bytes, as_of
    )
    result = _one_snapshot(ctx.pk, query, cursor, view_version, evaluation_id)
    if as_observation:
        event = append_recall_result(
            ctx.pk,
            content=_render(result, frame_id),
            payload=result,
            thread=thread,
            idempotency_key=idempotency_key,
        )
        result["observation"] = {"ref": event.ref, "seq": event.seq}
    return result


def _one_snapshot(
    context_pk: int,
    query: Query,
    cursor: str | None,
    view_version: int | None,
    evaluation_id: int | None,
) -> RecallJson:
    """The page, read in one snapshot. The walk, the page and the version come from one
    statement; only a page holding a node too big to prefetch needs a second read, and then
    the whole page is made again in a repeatable-read transaction so both reads see the same
    version."""
    result = None
    if not connection.in_atomic_block and cursor is None:
        result = _recall(context_pk, query, cursor, view_version, evaluation_id, second_read=False)
    if result is None:
        if connection.in_atomic_block:
            result = _recall(
                context_pk, query, cursor, view_version, evaluation_id, second_read=True
            )
        else:
            with transaction.atomic():
                with connection.cursor() as c:
                    c.execute(statements("memory.recall")["snapshot"])
                result = _recall(
                    context_pk, query, cursor, view_version, evaluation_id, second_read=True
                )
    assert result is not None
    return result


def _recall(
    context_pk: int,
    query: Query,
    cursor: str | None,
    view_version: int | None,
    evaluation_id: int | None,
    *,
    second_read: bool,
) -> RecallJson | None:
    """The page, or None when it needs a second read and `second_read` is not allowed."""
    params = {
        "frame_id": query.frame_id,
        "depth": query.depth,
        "direction": query.direction,
        "include_bodies": query.include_bodies,
        "include_events": query.include_events,
        "max_nodes": query.max_nodes,
    }
    if query.as_of is not None:  # left out for a recall of now, so its cursors stay as they were
        params["as_of"] = query.as_of
    qhash = params_hash(params)
    offset, issued = read_cursor(cursor, context_pk, qhash) if cursor is not None else (0, None)
    walk = _checked_walk(context_pk, query, qhash, cursor, issued, offset, view_version,
                         evaluation_id)  # fmt: skip
    page, end, used = _page(walk, query, offset)
    if not _read_large(context_pk, walk, page, query, second_read):
        return None
    nodes = _nodes(walk, page, query.include_bodies, query.include_events)
    next_cursor = (
        issue_cursor(context_pk, qhash, end, walk.version) if len(walk.order) > end else None
    )
    return {
        "nodes": nodes,
        "edges": _edges(walk, end, page),
        "next_cursor": next_cursor,
        "version": walk.version,
        "frame_id": query.frame_id,
        "depth": query.depth,
        "direction": query.direction,
        "page": {"offset": offset, "count": len(nodes), "bytes": used},
    }


def _checked_walk(
    context_pk: int,
    query: Query,
    qhash: str,
    cursor: str | None,
    issued: Any,
    offset: int,
    view_version: int | None,
    evaluation_id: int | None,
) -> Walk:
    """The walk as far as this page, once the view (and a cursor's version) matches the
    context's version; NotFound when the start frame (or event) does not exist."""
    walk: Walk | None
    if cursor is None:
        walk = first_walk(
            context_pk,
            query.frame_id,
            query.direction,
            query.depth,
            offset,
            query.max_nodes,
            query.include_bodies,
            query.include_events,
            query.page_bytes,
        )
        version = walk.version if walk is not None else context_version(context_pk)
        check_view(context_pk, version, view_version, evaluation_id)
    else:
        # Pages after the first run in one repeatable-read snapshot (see `recall`).
        version = context_version(context_pk)
        check_view(context_pk, version, view_version, evaluation_id)
        check_cursor_version(issued, version)
        walk = continue_walk(context_pk, version, qhash, query, offset)
    if walk is None:
        raise NotFound(
            f"{root_kind(query.frame_id)} {query.frame_id!r} does not exist in this context",
            details=[{"ref": query.frame_id}],
        )
    return walk


def _page(walk: Walk, query: Query, offset: int) -> tuple[list[Key], int, int]:
    """The nodes of this page (whole nodes, at most `max_nodes` and about `page_bytes`; a
    larger node comes alone), the walk position where the next page starts, and the bytes."""
    frames, events = walk.frames, walk.events
    candidates = walk.order[offset : offset + query.max_nodes]
    page: list[Key] = []
    used = 0
    for key in candidates:
        if (key[0] == "f" and key[1] not in frames) or (key[0] == "e" and key[1] not in events):
            continue  # a source naming an event that does not exist: nothing to show
        size = _node_bytes(key, frames, events, query.include_bodies, query.include_events)
        if page and used + size > query.page_bytes:
            break
        page.append(key)
        used += size
    if not page and candidates:
        page = candidates[:1]
    end = offset + (walk.order.index(page[-1]) - offset + 1 if page else len(candidates))
    return page, end, used


def _read_large(
    context_pk: int, walk: Walk, page: list[Key], query: Query, second_read: bool
) -> bool:
    """Read the bodies and texts too large to come with the page; False when there are some
    and a second read is not allowed."""
    frames, events = walk.frames, walk.events
    big_bodies = [k[1] for k in page if k[0] == "f" and frames[k[1]]["body"] is MISSING]
    big_texts = [k[1] for k in page if k[0] == "e" and events[k[1]]["content"] is MISSING]
    if not ((query.include_bodies and big_bodies) or (query.include_events and big_texts)):
        return True
    if not second_read:
        return False
    for pk, body in Frame.objects.filter(pk__in=big_bodies).values_list("pk", "body"):
        frames[pk]["body"] = body
    texts = Event.objects.filter(context_id=context_pk, seq__in=big_texts)
    for seq, content in texts.values_list("seq", "content"):
        events[seq]["content"] = content
    return True


def _nodes(
    walk: Walk, page: list[Key], include_bodies: bool, include_events: bool
) -> list[FrameNode | EventNode]:
    nodes: list[FrameNode | EventNode] = []
    for key in page:
        if key[0] == "f" and key[1] in walk.frames:
            row = walk.frames[key[1]]
            nodes.append(frame_node(row, walk.depth[key], row["body"] if include_bodies else None))
        elif key[0] == "e" and key[1] in walk.events:
            row = walk.events[key[1]]
            text = row["content"] if include_events else None
            preview = row["preview"] + ("…" if row["chars"] > PREVIEW_CHARS else "")
            nodes.append(event_node(row, walk.depth[key], preview, text))
    return nodes
