"""The event shapes: every one starts from `event_head` (`ref`, `kind`, `thread`,
`status`); the compiled input's observation leaves `status` out because it only ever holds
active observations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from memory.kinds import EVENT_STATUSES, event_status
from memory.limits import EVENT_PREVIEW_CHARS
from memory.models import Event
from memory.shapes.erasures import TombstoneJson
from memory.shapes.fields import OPAQUE, Choices, Doc, Timestamp
from memory.vocabulary import event_ref

# The Event columns the row builders below read (beside their own), in the order the recall
# statements select them.
EVENT_ROW_COLUMNS = ("seq", "kind", "thread", "is_observation", "active", "created_at")


class EventIdentity(TypedDict):
    ref: Annotated[str, Doc('"@e<seq>"')]
    kind: str
    thread: str


class EventHead(EventIdentity):
    status: Annotated[
        str,
        Choices.of(EVENT_STATUSES),
        Doc("`active` or `retired` for observations, else `recorded`"),
    ]


def event_identity(seq: int, kind: str, thread: str) -> EventIdentity:
    """What names an event in every shape: `@e<seq>`, its kind and its thread."""
    return {"ref": event_ref(seq), "kind": kind, "thread": thread}


def event_head(seq: int, kind: str, thread: str, is_observation: bool, active: bool) -> EventHead:
    """The identity and the status (`active`/`retired` for observations, else `recorded`)."""
    return {**event_identity(seq, kind, thread), "status": event_status(is_observation, active)}


class EventJson(EventHead):
    seq: int
    created_at: Timestamp
    size: Annotated[int, Doc("length of the text in characters")]
    tokens: int
    pending: Annotated[bool, Doc("waiting for an evaluation to claim it")]
    request: Annotated[str | None, Doc("`open` or `delivered` for user requests and actions")]
    delivers: list[str]
    delivered_by: str | None
    payload: Any | None
    preview: Annotated[str, Doc("the first 200 characters of the text")]
    created: NotRequired[
        Annotated[bool, Doc("on append: false when an idempotent retry found the event")]
    ]


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
    created: Annotated[bool, Doc("false when the item's idempotency_key found an earlier event")]


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
    created_at: Timestamp
    payload: Any | None
    offset: int
    length: int
    content: str
    next_offset: int | None
    total: int
    erased: NotRequired[
        Annotated[
            list[TombstoneJson],
            OPAQUE,
            Doc(
                "when the event or a span of it was erased: its tombstones (when, by whom, "
                "why; the text is masked)"
            ),
        ]
    ]


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


class ChunkRead(TypedDict):
    """The `read_event` call that reads on from where a preview's head ends."""

    tool: Literal["read_event"]
    ref: str
    offset: int
    length: int


class Preview(TypedDict):
    """What the preview of a long observation shows (R47): its size in characters, the
    `[start, end)` spans shown (head and tail), and how to read the rest."""

    size: int
    shown: list[list[int]]
    read: ChunkRead


class Observation(EventIdentity):
    content: str
    tokens: int
    delivers: NotRequired[list[str]]
    preview: NotRequired[Preview]
    request: NotRequired[str | None]


def observation_json(
    row: Mapping[str, Any], content: str, preview: Preview | None, user_message: bool
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
