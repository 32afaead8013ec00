"""The shapes of the graph and of search: relations, recall nodes (frames and event
leaves) and search hits."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict

from memory.models import Relation
from memory.shapes.events import EventHead, event_head


class EventNode(EventHead):
    type: Literal["event"]
    depth: int
    size: int
    active: bool
    retired: bool
    created_at: str
    preview: str
    content: NotRequired[str]


def event_node(row: Mapping[str, Any], depth: int, preview: str, content: str | None) -> EventNode:
    """An event as a recall node, `depth` steps from the start frame; `content` is the whole
    text when asked for. `row` holds the Event columns seq, kind, thread, is_observation,
    active, created_at and `chars` (the text's length)."""
    head = event_head(row["seq"], row["kind"], row["thread"], row["is_observation"], row["active"])
    node: EventNode = {
        **head,
        "type": "event",
        "depth": depth,
        "size": row["chars"],
        "active": row["active"],
        "retired": head["status"] == "retired",
        "created_at": row["created_at"].isoformat(),
        "preview": preview,
    }
    if content is not None:
        node["content"] = content
    return node


class RelationJson(TypedDict):
    id: int
    subject: str
    name: str
    object: str
    live: bool
    created_version: int
    removed_version: int | None


def relation_json(relation: Relation) -> RelationJson:
    """A relation: its id, `subject` and `object` frame ids, `name`, whether it is `live`,
    and the versions that created and removed it (`subject` and `object` loaded with it)."""
    return {
        "id": relation.pk,
        "subject": relation.subject.frame_id,
        "name": relation.name,
        "object": relation.object.frame_id,
        "live": relation.removed_version is None,
        "created_version": relation.created_version,
        "removed_version": relation.removed_version,
    }


class NodeRetire(TypedDict):
    requested_tick: int
    due_tick: int
    reason: str


class FrameNode(TypedDict):
    type: Literal["frame"]
    id: str
    depth: int
    revision: int
    status: str
    protected: bool
    sources: list[str]
    body: NotRequired[Any]
    retire: NotRequired[NodeRetire]


def frame_node(row: Mapping[str, Any], depth: int, body: Any) -> FrameNode:
    """A frame as a recall node, `depth` steps from the start frame: its `body` when given
    (None leaves it out) and, while it retires, the ticks of its window. `row` holds the
    Frame columns frame_id, revision, status, protected, sources and the retire_* ones."""
    node: FrameNode = {
        "type": "frame",
        "id": row["frame_id"],
        "depth": depth,
        "revision": row["revision"],
        "status": row["status"],
        "protected": row["protected"],
        "sources": row["sources"],
    }
    if body is not None:
        node["body"] = body
    if row["status"] == "retiring":
        node["retire"] = {
            "requested_tick": row["retire_requested_tick"],
            "due_tick": row["retire_due_tick"],
            "reason": row["retire_reason"],
        }
    return node


class SnippetPart(TypedDict):
    text: str
    match: bool


class Snippet(TypedDict):
    snippet: str
    parts: list[SnippetPart]


class Coverage(TypedDict):
    matched: list[str]  # the query's content words the hit holds (any form of the word)
    # those it holds only through the turn it answers (reply context), when there are any
    borrowed: NotRequired[list[str]]
    missing: list[str]  # the others
    share: float  # 0-1: matched words count 1, borrowed ones ranking.REPLY_WEIGHT


class SearchHit(TypedDict):
    type: str
    id: NotRequired[str]
    ref: str
    status: str
    kind: str
    thread: str
    created_at: str
    score: float
    snippet: str
    snippet_parts: list[SnippetPart]
    next: dict[str, Any]
    coverage: NotRequired[Coverage]  # the query's content words it holds (R62)
    answers: NotRequired[str]  # the turn it borrowed words from (`@e41`), when it did
    superseded_by: NotRequired[list[str]]  # live frames superseding this one (R60)
    index_parts: NotRequired[int]  # tsvectors it is indexed in, when more than one


def search_hit(
    ref: str,
    is_frame: bool,
    status: str,
    kind: str,
    thread: str,
    created_at: datetime,
    score: float,
    parts: list[SnippetPart],
) -> SearchHit:
    """One search hit: a frame (`id` = `ref` = its frame id) or an event (`ref` = `@e<seq>`),
    its indexed status, kind and thread, the rank `score` (higher is better, six decimals),
    the snippet as text and as `{text, match}` parts, and the read to follow it with."""
    hit: SearchHit = {
        "type": "frame" if is_frame else "event",
        "ref": ref,
        "status": status,
        "kind": kind,
        "thread": thread,
        "created_at": created_at.isoformat(),
        "score": round(float(score), 6),
        "snippet": "".join(p["text"] for p in parts),
        "snippet_parts": parts,
        "next": {"recall": {"frame_id": ref}} if is_frame else {"read": ref},
    }
    if is_frame:
        hit["id"] = ref
    return hit
