"""Requests about events: appending one or many, listing, reading in chunks, evaluating,
registering and cancelling actions (R2, R3, R8, R12, R22, R25, R50, R59).

`EventAppendIn` is the one rule for an event a client appends, its bulk form checks each item
with it, and `memory.timeline.events` / `memory.timeline.bulk` take the validated models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from memory.errors import InvalidRequest, MorphzError
from memory.idempotency import Key
from memory.kinds import APPENDABLE_KINDS, EVENT_KINDS, USER_MESSAGE
from memory.limits import (
    CHUNK_DEFAULT,
    CHUNK_MAX,
    MAX_BULK_EVENTS,
    MAX_CANCEL_REASON_CHARS,
    MAX_DELIVERS,
)
from memory.read.lists import EVENT_STATUS_FILTERS
from memory.read.paging import EVALUATIONS, EVENTS
from memory.requests import common
from memory.requests.common import QInt
from memory.requests.model import StrictModel
from memory.requests.refusals import UNKNOWN_FIELD, message, ordered, place, refusal
from memory.requests.strict import Choice, Content, EventRef, Name, Text, ThreadName
from memory.vocabulary import MAX_SEQ


class EventAppendIn(StrictModel):
    """An event a client appends: a user request, a tool result, an agent message or an
    external fact."""

    kind: Annotated[str, Choice(APPENDABLE_KINDS)]
    content: Content
    payload: Any = Field(None, json_schema_extra={"nullable": True})
    thread: ThreadName | None = common.thread()
    delivers: list[EventRef] = Field(
        default_factory=list,
        max_length=MAX_DELIVERS,
        description='refs of the requests or actions this event answers, e.g. ["@e17"]',
    )
    idempotency_key: Key | None = common.key()

    @field_validator("content")
    @classmethod
    def _asks_something(cls, content: str, info: ValidationInfo) -> str:
        # Only spaces or invisible characters (zero-width space, BOM) ask nothing, and a
        # user message opens a request (R3). History being rebuilt (`replaying`) was admitted
        # when it was written: an older version let blank messages in.
        replaying = bool(info.context and info.context.get("replaying"))
        if (
            info.data.get("kind") == USER_MESSAGE
            and not replaying
            and not any(c.isprintable() and not c.isspace() for c in content)
        ):
            raise PydanticCustomError(
                "blank", "a user_message must have content (it opens a request)"
            )
        return content


class EventBulkAppendIn(StrictModel):
    """Several events appended atomically and in order (R50)."""

    events: list[EventAppendIn] = Field(
        min_length=1,
        max_length=MAX_BULK_EVENTS,
        description=f"1-{MAX_BULK_EVENTS} events, appended atomically and in order (R50)",
    )


def read_bulk(body: Mapping[str, Any]) -> list[EventAppendIn]:
    """The events of a bulk append's body (`{"events": [...]}`, nothing beside them), each
    read by `read_items`."""
    unknown = sorted(set(body) - {"events"})
    if unknown:
        raise InvalidRequest(
            f"unknown field {unknown[0]!r} beside events",
            details=[{"field": name, "message": UNKNOWN_FIELD} for name in unknown],
        )
    return read_items(body["events"])


def read_items(items: Any, *, replaying: bool = False) -> list[EventAppendIn]:
    """The items of a bulk append, each validated by `EventAppendIn`; the first failure
    refused as `events[<index>]: ...` (`details` `[{index, field}]`, the field like
    `events[1].kind`), with the code a single append gives the same item."""
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK_EVENTS:
        raise InvalidRequest(
            f"events must be a list of 1-{MAX_BULK_EVENTS} events", details=[{"field": "events"}]
        )
    out = []
    for index, item in enumerate(items):
        if isinstance(item, EventAppendIn):
            out.append(item)
            continue
        try:
            out.append(EventAppendIn.model_validate(item, context={"replaying": replaying}))
        except ValidationError as exc:
            raise item_refusal(index, exc) from None
    return out


def item_refusal(index: int, exc: ValidationError) -> MorphzError:
    """Item `index`'s first failure, with the code the single append gives it."""
    first = ordered(exc)[0]
    field = place(("events", index, *first["loc"][:1]))  # the item's field, as it was named
    code = refusal(exc).code
    if first["type"] == "extra_forbidden":
        text = f"unknown field {first['loc'][-1]!r}"
    elif not first["loc"]:
        text = "each event must be an object"
    else:
        text = f"{place(first['loc'])}: {message(first)}"
    details = [{"index": index, "field": field}]
    return MorphzError(f"events[{index}]: {text}", code=code, details=details)


def appended_items(items: Sequence[EventAppendIn | Mapping[str, Any]]) -> list[EventAppendIn]:
    """Items already validated pass; mappings are validated as a bulk append's items."""
    return read_items(list(items))


class EventListQuery(StrictModel):
    kind: Annotated[str, Choice(EVENT_KINDS)] | None = Field(None)
    thread: ThreadName | None = common.thread(filter=True)
    status: Annotated[str, Choice(EVENT_STATUS_FILTERS)] | None = Field(None)
    after: QInt | None = Field(None, ge=0, le=MAX_SEQ, description="only events with seq > after")
    cursor: Text | None = common.cursor()
    limit: QInt = common.limit(EVENTS.limit, EVENTS.max_limit)
    min_version: QInt | None = common.min_version()


class EventChunkQuery(StrictModel):
    offset: QInt = Field(0, ge=0, le=MAX_SEQ)
    length: QInt = Field(CHUNK_DEFAULT, ge=1, le=CHUNK_MAX)
    min_version: QInt | None = common.min_version()


class EvaluationIn(StrictModel):
    thread: ThreadName | None = common.thread()
    idempotency_key: Key | None = common.key()
    continuation: bool = Field(
        False, description="a model continuation: claims nothing and never advances the tick"
    )
    include_instructions: bool = Field(
        False, description="put the model protocol's instructions ahead of the compiled text"
    )


class EvaluationListQuery(StrictModel):
    thread: ThreadName | None = common.thread(filter=True)
    cursor: Text | None = common.cursor()
    limit: QInt = common.limit(EVALUATIONS.limit, EVALUATIONS.max_limit)


class ActionIn(StrictModel):
    name: Name = Field(max_length=200)
    arguments: Any = Field(None, json_schema_extra={"nullable": True})
    thread: ThreadName | None = common.thread()
    idempotency_key: Key | None = common.key()

    @field_validator("name")
    @classmethod
    def _names_something(cls, name: str) -> str:
        if not name.strip():
            raise PydanticCustomError("blank", "This field may not be blank.")
        return name


class ActionCancelIn(StrictModel):
    """Cancelling a pending action (R59): why, for the model to read."""

    reason: Name | None = Field(
        None,
        max_length=MAX_CANCEL_REASON_CHARS,
        description="why the action is cancelled; the model reads it in the cancellation",
    )
