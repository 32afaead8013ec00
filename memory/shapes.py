"""The JSON shapes of contexts, frame revisions, transactions and events: one TypedDict and
one builder for each.

The API (api/shapes.py documents them in the OpenAPI schema), the explorer's first paint,
recall, search and the compiled model input all build their context and event JSON here,
so the same field never means two things in two places. Every event shape starts from
`event_head` (`ref`, `kind`, `thread`, `status`); the compiled input leaves `status` out
because it only ever holds active observations.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from memory.kinds import event_status
from memory.limits import EVENT_PREVIEW_CHARS
from memory.models import Context, Event, TransactionRecord
from memory.pressure import pressure_state
from memory.vocabulary import event_ref

# -- context -------------------------------------------------------------------------------


class ContextSettings(TypedDict):
    grace_ticks: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    observation_budget_tokens: int


class ForkedFrom(TypedDict):
    slug: str | None  # null when the source context was deleted
    version: int
    tick: int | None


class ContextJson(TypedDict):
    slug: str
    name: str
    version: int
    tick: int
    last_seq: int
    settings: ContextSettings
    pressure: dict[str, Any]
    frozen: bool
    forked_from: ForkedFrom | None


def context_json(context: Context) -> ContextJson:
    """A context: counters (`version`, `tick`, `last_seq`), its settings (ticks, tokens,
    percents of capacity), pressure now, whether it is frozen and where it was forked from."""
    return {
        "slug": context.slug,
        "name": context.name,
        "version": context.version,
        "tick": context.tick,
        "last_seq": context.last_seq,
        "settings": {
            "grace_ticks": context.grace_ticks,
            "capacity_tokens": context.capacity_tokens,
            "pressure_percent": context.pressure_percent,
            "maintenance_percent": context.maintenance_percent,
            "maintenance_exit_percent": context.maintenance_exit_percent,
            "observation_budget_tokens": context.observation_budget_tokens,
        },
        "pressure": pressure_state(context).as_dict(),
        "frozen": context.frozen,
        "forked_from": _lineage(context),
    }


def _lineage(context: Context) -> ForkedFrom | None:
    version = context.forked_version
    if version is None:
        return None
    source = context.forked_from.slug if context.forked_from_id and context.forked_from else None
    return {"slug": source, "version": version, "tick": context.forked_tick}


# -- frame revisions -----------------------------------------------------------------------


class RevisionJson(TypedDict):
    revision: int
    body: Any
    body_omitted: bool
    body_chars: NotRequired[int]
    sources: list[str]
    version: int
    transaction: int
    created_at: str


def revision_json(
    revision: int,
    body: Any,
    sources: list[str],
    version: int,
    transaction: int,
    created_at: datetime,
    *,
    omitted: bool = False,
    body_chars: int | None = None,
) -> RevisionJson:
    """One revision of a frame: its number, body (None when `omitted`: too long for a page,
    read on its own), sources, the committed version and transaction that wrote it;
    `body_chars` is the body's size as JSON text, where measured."""
    item: RevisionJson = {
        "revision": revision,
        "body": body,
        "body_omitted": omitted,
        "sources": list(sources),
        "version": version,
        "transaction": transaction,
        "created_at": created_at.isoformat(),
    }
    if body_chars is not None:
        item["body_chars"] = body_chars
    return item


# -- transactions --------------------------------------------------------------------------


class TransactionJson(TypedDict):
    id: int
    status: str
    author: str
    author_kind: str
    thread: str
    base_version: int | None
    committed_version: int | None
    reason: str
    text: str
    text_truncated: bool
    ops: Any
    ops_omitted: bool
    receipt: Any
    errors: Any
    frames: list[str]
    evaluation: int | None
    ref: str | None
    created_at: str


def transaction_json(record: TransactionRecord) -> TransactionJson:
    """A submitted transaction, committed or rejected: author, versions, text and operations
    (cut or left out when memory.read.pages bounded the record: `text_truncated`,
    `ops_omitted`), the receipt or the errors, the frames it touched and its event `ref`."""
    return {
        "id": record.pk,
        "status": record.status,
        "author": record.author,
        "author_kind": record.author_kind,
        "thread": record.thread,
        "base_version": record.base_version,
        "committed_version": record.committed_version,
        "reason": record.reason,
        "text": record.text,
        "text_truncated": getattr(record, "text_truncated", False),
        "ops": record.ops,
        "ops_omitted": getattr(record, "ops_omitted", False),
        "receipt": record.receipt,
        "errors": record.errors,
        "frames": list(record.frame_ids),
        "evaluation": record.evaluation_id,
        "ref": record.event.ref if record.event_id and record.event else None,
        "created_at": record.created_at.isoformat(),
    }


# -- events --------------------------------------------------------------------------------


class EventIdentity(TypedDict):
    ref: str
    kind: str
    thread: str


class EventHead(EventIdentity):
    status: str  # memory.kinds.EVENT_STATUSES


def event_identity(seq: int, kind: str, thread: str) -> EventIdentity:
    """What names an event in every shape: `@e<seq>`, its kind and its thread."""
    return {"ref": event_ref(seq), "kind": kind, "thread": thread}


def event_head(seq: int, kind: str, thread: str, is_observation: bool, active: bool) -> EventHead:
    """The identity and the status (`active`/`retired` for observations, else `recorded`)."""
    return {**event_identity(seq, kind, thread), "status": event_status(is_observation, active)}


class EventJson(EventHead):
    seq: int
    created_at: str
    size: int
    tokens: int
    pending: bool
    request: str | None
    delivers: list[str]
    delivered_by: str | None
    payload: Any
    preview: str
    created: NotRequired[bool]


def event_json(event: Event, preview: str) -> EventJson:
    """An event in lists, on append and in the explorer: sizes in characters and estimated
    tokens, request state, the refs it delivers or is delivered by, and `preview`, the first
    EVENT_PREVIEW_CHARS characters of its text (longer previews are cut)."""
    return {
        **event_head(event.seq, event.kind, event.thread, event.is_observation, event.active),
        "seq": event.seq,
        "created_at": event.created_at.isoformat(),
        "size": event.size_chars,
        "tokens": event.token_estimate,
        "pending": event.pending,
        "request": event.request_state,
        "delivers": [event_ref(seq) for seq in event.delivers],
        "delivered_by": event_ref(event.delivered_by_seq) if event.delivered_by_seq else None,
        "payload": event.payload,
        "preview": preview[:EVENT_PREVIEW_CHARS],
    }


class AppendedEvent(EventHead):
    seq: int
    size: int
    tokens: int
    request: str | None
    created: bool


def appended_event_json(event: Event, created: bool) -> AppendedEvent:
    """One item of a bulk append's answer; `created` is false when its idempotency key found
    an earlier event."""
    return {
        **event_head(event.seq, event.kind, event.thread, event.is_observation, event.active),
        "seq": event.seq,
        "size": event.size_chars,
        "tokens": event.token_estimate,
        "request": event.request_state,
        "created": created,
    }


class EventChunk(EventHead):
    seq: int
    size: int
    active: bool
    retired: bool
    created_at: str
    payload: Any
    offset: int
    length: int
    content: str
    next_offset: int | None
    total: int


def event_chunk_json(row: Mapping[str, Any], offset: int, chunk: str, total: int) -> EventChunk:
    """A slice of an event's text: `offset` and `length` in characters, `next_offset` null at
    the end, `size` and `total` the whole text's length. `row` holds the Event columns seq,
    kind, thread, is_observation, active, created_at and payload."""
    head = event_head(row["seq"], row["kind"], row["thread"], row["is_observation"], row["active"])
    end = min(offset, total) + len(chunk)
    return {
        **head,
        "seq": row["seq"],
        "size": total,
        "active": row["active"],
        "retired": head["status"] == "retired",
        "created_at": row["created_at"].isoformat(),
        "payload": row["payload"],
        "offset": offset,
        "length": len(chunk),
        "content": chunk,
        "next_offset": end if end < total else None,
        "total": total,
    }


class EventNode(EventHead):
    type: str
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
    snippet_parts: list[dict[str, Any]]
    next: dict[str, Any]


def search_hit(
    ref: str,
    is_frame: bool,
    status: str,
    kind: str,
    thread: str,
    created_at: datetime,
    score: float,
    parts: list[dict[str, Any]],
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


class Observation(EventIdentity):
    content: str
    tokens: int
    delivers: NotRequired[list[str]]
    preview: NotRequired[dict[str, Any]]
    request: NotRequired[str | None]


def observation_json(
    row: Mapping[str, Any], content: str, preview: dict[str, Any] | None, user_message: bool
) -> Observation:
    """An active observation in the compiled model input: its text as it enters the input
    (bounded to the observation budget), estimated `tokens`, the actions it `delivers`, a
    `preview` saying how to read what was cut, and the `request` state of a user message.
    `row` holds the Event columns seq, kind, thread, token_estimate, delivers, request_state."""
    item: Observation = {
        **event_identity(row["seq"], row["kind"], row["thread"]),
        "content": content,
        "tokens": row["token_estimate"],
    }
    if row["delivers"]:
        # A tool result names the action it answers.
        item["delivers"] = [event_ref(seq) for seq in row["delivers"]]
    if preview is not None:
        item["preview"] = preview
    if user_message:
        item["request"] = row["request_state"]
    return item
