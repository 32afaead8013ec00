"""The rows of a recall page: the walk as far as the page needs and its candidates' columns,
read by the first page's one statement or, for a later page, from the walk kept in this
process (memory.recall.walk) and three reads in the caller's snapshot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from django.db import connection

from memory.models import Event, Frame
from memory.recall.statements import first_page_sql, run_prepared
from memory.recall.walk import Found, Key
from memory.recall.walk import state_for as walk_state_for
from memory.sql import by_name, named_rows, statements
from memory.sql.columns import RECALL_EVENT, RECALL_FRAME
from memory.vocabulary import seq_of

PREVIEW_CHARS = 280

# A candidate's columns, by the names the statements give them (memory/recall/queries.sql).
FRAME_COLUMNS = ("sources", *RECALL_FRAME, "body_bytes", "body")
EVENT_COLUMNS = (*RECALL_EVENT, "preview", "chars", "content_bytes", "content")

# Stands for a body or a text too large to come with the page: a second read fetches it.
MISSING: Any = object()


@dataclass(frozen=True)
class Query:
    """What a recall asks for; its hash binds the cursors."""

    frame_id: str
    depth: int
    direction: str
    include_bodies: bool
    include_events: bool
    max_nodes: int
    page_bytes: int
    as_of: int | None = None  # the past version read (`recall`'s `as_of`); None: now


@dataclass(kw_only=True)
class Walk(Found):
    """The walk up to the end of the requested page, as one statement returned it."""

    version: int
    frames: dict[int, dict[str, Any]] = field(default_factory=dict)  # page candidates
    events: dict[int, dict[str, Any]] = field(default_factory=dict)  # page candidates
    relations: list[tuple[int, int, str, int]] = field(default_factory=list)


def _json(value: Any) -> Any:
    """jsonb/json columns read through a raw cursor arrive as text."""
    return json.loads(value) if isinstance(value, str) else value


def first_walk(
    context_pk: int,
    root: str,
    direction: str,
    depth: int,
    offset: int,
    max_nodes: int,
    include_bodies: bool,
    include_events: bool,
    budget: int,
) -> Walk | None:
    """One statement, one snapshot: the breadth-first walk (one recursive step per level,
    carrying the visited set, LIMITed to the first offset + max_nodes + 1 nodes), the rows
    of the page's candidates, the relations between them and the earlier nodes, and the
    context version. The root is a frame id or an event ref; None when it does not exist."""
    target = offset + max_nodes + 1
    params: dict[str, Any] = {
        "ctx": context_pk,
        "root": root,
        "seq": seq_of(root),
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
    names, rows = run_prepared(f"morphz_recall_{direction}", first_page_sql(direction), params)
    # The version row comes first (n = -1).
    last = by_name(names, rows.pop(0))
    walk = Walk(version=last["version"])
    walk.relations = [(r[0], r[1], r[2], r[3]) for r in _json(last["relations"])]
    if not rows:
        return None
    _read_first_rows(walk, names, rows, offset, max_nodes)
    return walk


def _read_first_rows(
    walk: Walk, names: list[str], rows: list[tuple[Any, ...]], offset: int, max_nodes: int
) -> None:
    """Fill `walk` from the statement's node rows (`names` are its columns): the order and
    depths of every node, the sources of every frame, and the columns of the page's
    candidates."""
    at = {name: i for i, name in enumerate(names)}
    node = itemgetter(*(at[c] for c in ("n", "level", "node", "id", "frame_id", "sources")))
    frame_of = itemgetter(*(at[c] for c in FRAME_COLUMNS))
    event_of = itemgetter(*(at[c] for c in EVENT_COLUMNS))
    # jsonb/json arrive as text: parse them all with one json.loads (one C-level parse
    # instead of a Python-level call per value, which was most of the time spent here).
    texts: list[str] = []
    for row in rows:
        n, level, kind, pk, fid, sources = node(row)
        key: Key = (kind, pk)
        walk.order.append(key)
        walk.depth[key] = level
        if kind == "f":
            walk.frame_id[pk] = fid
            walk.pk_by_id[fid] = pk
            texts.append(sources or "[]")
            if offset <= n < offset + max_nodes:
                frame = {"pk": pk, **dict(zip(FRAME_COLUMNS, frame_of(row), strict=True))}
                # The size of the sources as JSON text, for the page budget.
                frame["sources_chars"] = len(sources or "[]")
                if frame["body"] is not None:
                    texts.append(frame["body"])
                walk.frames[pk] = frame
        elif offset <= n < offset + max_nodes and row[at["kind"]] is not None:
            event = {"seq": pk, **dict(zip(EVENT_COLUMNS, event_of(row), strict=True))}
            if event["content"] is None:
                event["content"] = MISSING
            walk.events[pk] = event
    values_iter = iter(json.loads("[" + ",".join(texts) + "]"))
    for kind, pk in walk.order:
        if kind == "f":
            walk.sources[pk] = next(values_iter) or []
            candidate = walk.frames.get(pk)
            if candidate is not None:
                candidate["sources"] = walk.sources[pk]
                has_body = candidate["body"] is not None
                candidate["body"] = next(values_iter) if has_body else MISSING


def continue_walk(
    context_pk: int, version: int, qhash: str, query: Query, offset: int
) -> Walk | None:
    """A later page from the walk kept in this process (memory.recall.walk), continued as
    far as this page needs, with its rows read in the caller's snapshot. Same result as
    `first_walk` for the same offset; None when the root does not exist."""
    root = _root(context_pk, query.frame_id)
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
        walk = Walk(
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
    _read_page_rows(walk, params)
    return walk


def _root(context_pk: int, ref: str) -> Key | None:
    """The walk's start node: the event an event ref names or the frame a frame id names;
    None when this context has no such node."""
    seq = seq_of(ref)
    if seq is not None:
        found = Event.objects.filter(context_id=context_pk, seq=seq).exists()
        return ("e", seq) if found else None
    pk = (
        Frame.objects.filter(context_id=context_pk, frame_id=ref)
        .values_list("pk", flat=True)
        .first()
    )
    return ("f", pk) if pk is not None else None


def _read_page_rows(walk: Walk, params: dict[str, Any]) -> None:
    """A later page's rows in the caller's snapshot: its frames, events (text only when it
    fits the page) and the relations between its frames and the earlier ones."""
    frame_pks, seqs = params["ids"], params["seqs"]
    sql = statements("memory.recall")
    with connection.cursor() as cursor:
        cursor.execute(sql["page_frames"], params)
        for row in named_rows(cursor):
            frame = {"pk": row.pop("id"), **row}
            frame["sources_chars"] = len(frame["sources"] or "[]")
            frame["sources"] = json.loads(frame["sources"] or "[]")
            frame["body"] = json.loads(frame["body"]) if frame["body"] is not None else MISSING
            walk.frames[frame["pk"]] = frame
        if seqs:
            cursor.execute(sql["page_events"], params)
            for event in named_rows(cursor):
                if event["content"] is None:
                    event["content"] = MISSING
                walk.events[event["seq"]] = event
        if frame_pks:
            cursor.execute(sql["page_relations"], params)
            walk.relations = [
                (r["id"], r["subject_id"], r["name"], r["object_id"]) for r in named_rows(cursor)
            ]
