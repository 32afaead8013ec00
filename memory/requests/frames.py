"""Requests about the model's memory: transactions, frames and their bodies, relations,
recall and search (R13-R33, R52, R63)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from memory.idempotency import Key
from memory.kinds import EVENT_KINDS, FRAME_STATUSES, TRANSACTION_STATUSES
from memory.limits import (
    HISTORY_PAGE,
    MAX_HISTORY_PAGE,
    RECALL_DEFAULT_DEPTH,
    RECALL_DEFAULT_NODES,
    RECALL_MAX_DEPTH,
    RECALL_MAX_NODES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    SEARCH_MAX_QUERY_CHARS,
)
from memory.read.paging import FRAMES, RELATIONS, TRANSACTIONS
from memory.requests import common
from memory.requests.common import QInt
from memory.requests.model import StrictModel
from memory.requests.strict import (
    Choice,
    Content,
    FilledContent,
    Name,
    NotNull,
    QueryFlag,
    Seq,
    SourceRef,
    Text,
    ThreadName,
    Time,
)
from memory.search.query import RANK_POOL, STATUSES
from memory.vocabulary import FRAME_ID_MAX, MAX_SEQ, RELATION_NAME_MAX


class TransactionIn(StrictModel):
    """Either `text` (the S-expression) or the JSON form (`base_version`, `reason`, `ops`)."""

    text: Annotated[FilledContent | None, NotNull] = Field(
        None, description='the text form: "(context-tx (base-version 3) ...)"'
    )
    base_version: Seq | None = None
    reason: Text | None = None
    ops: Annotated[list[Any] | None, NotNull] = Field(
        None,
        description="operations of the JSON form, e.g. "
        '{"op": "derive", "id": "x", "from": ["@e1"], "body": {...}}',
    )
    thread: ThreadName | None = common.thread()
    evaluation: int | None = common.evaluation(
        "the evaluation whose view the transaction was written from"
    )
    idempotency_key: Key | None = common.key()


class TransactionListQuery(StrictModel):
    frame: Name | None = Field(None, max_length=FRAME_ID_MAX)
    status: Annotated[str, Choice(TRANSACTION_STATUSES)] | None = Field(None)
    after: QInt | None = Field(
        None, ge=0, le=MAX_SEQ, description="only transactions with id > after"
    )
    cursor: Text | None = common.cursor()
    limit: QInt = common.limit(TRANSACTIONS.limit, TRANSACTIONS.max_limit)
    min_version: QInt | None = common.min_version()


class FrameBodyIn(StrictModel):
    """A new body for one frame, written as S-expression fields or as a JSON object."""

    text: Content = Field(
        description='the body alone: "(goal ship-v2) (stage paused)" or \'{"goal": "ship-v2"}\''
    )
    form: Annotated[Literal["fields", "json"], Choice(("fields", "json"))] = Field(
        description="how `text` is written"
    )
    base_version: Seq | None = None
    reason: Text | None = None


class FrameListQuery(StrictModel):
    status: Annotated[str, Choice(FRAME_STATUSES)] | None = Field(None)
    source: SourceRef | None = Field(
        None,
        description="only frames citing this source (R63): an event ref like `@e42` or a frame id",
    )
    cursor: Text | None = common.cursor()
    limit: QInt = common.limit(FRAMES.limit, FRAMES.max_limit)
    as_of: QInt | None = common.as_of()
    min_version: QInt | None = common.min_version()


class FrameDetailQuery(StrictModel):
    as_of: QInt | None = common.as_of()
    history_before: QInt | None = Field(
        None,
        ge=1,
        le=MAX_SEQ,
        description="only revisions older than this one (`history.next_before` of the last page)",
    )
    history_limit: QInt = Field(
        HISTORY_PAGE, ge=1, le=MAX_HISTORY_PAGE, description="revisions per page, newest first"
    )
    min_version: QInt | None = common.min_version()


class RelationListQuery(StrictModel):
    subject: Name | None = Field(None, max_length=FRAME_ID_MAX)
    object: Name | None = Field(None, max_length=FRAME_ID_MAX)
    name: Name | None = Field(None, max_length=RELATION_NAME_MAX)
    include_removed: QueryFlag = False
    cursor: Text | None = common.cursor()
    limit: QInt = common.limit(RELATIONS.limit, RELATIONS.max_limit)
    as_of: QInt | None = common.as_of()
    min_version: QInt | None = common.min_version()


class RecallIn(StrictModel):
    frame_id: Name = Field(
        max_length=FRAME_ID_MAX,
        description="the frame to start from, or an event ref (@e42) to start from the event",
    )
    depth: int = Field(RECALL_DEFAULT_DEPTH, ge=1, le=RECALL_MAX_DEPTH)
    direction: Annotated[str, Choice(("ancestors", "descendants", "both"))] | None = Field(
        None,
        description="default: ancestors from a frame, descendants (the frames citing it) "
        "from an event",
    )
    include_bodies: bool = True
    include_events: bool = False
    max_nodes: int = Field(RECALL_DEFAULT_NODES, ge=1, le=RECALL_MAX_NODES)
    cursor: Name | None = Field(None, max_length=2000)
    view_version: Seq | None = None
    evaluation: int | None = Field(None, ge=1, le=MAX_SEQ)
    as_observation: bool = Field(
        False, description="append the result as a recall_result observation (R30)"
    )
    thread: ThreadName | None = common.thread()
    as_of: int | None = common.as_of()
    min_version: Annotated[int | None, NotNull] = common.min_version()


class SearchQuery(StrictModel):
    q: Name = Field(max_length=SEARCH_MAX_QUERY_CHARS)
    type: Annotated[str, Choice(("frame", "event"))] | None = Field(None)
    status: Annotated[str, Choice(STATUSES)] | None = Field(None)
    kind: Annotated[str, Choice((*EVENT_KINDS, "frame"))] | None = Field(
        None, description="an event kind, or frame"
    )
    thread: ThreadName | None = common.thread(filter=True)
    since: Time | None = Field(None, description="ISO 8601 with offset: 2025-01-31T12:00:00Z")
    until: Time | None = Field(None, description="exclusive; ISO 8601 with offset")
    transactions: QueryFlag | None = Field(
        None,  # absent: left out unless kind=transaction; `transactions=` is 400
        description="include transaction events (left out by default: they echo the frames)",
    )
    limit: QInt = common.limit(SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT)
    offset: QInt | None = Field(
        None,
        ge=0,
        le=RANK_POOL - 1,
        description="skip this many ranked hits (default 0; next page: the result's "
        "`next_offset`); not with `cursor`",
    )
    cursor: Name | None = Field(
        None,
        max_length=4000,
        description="`next_cursor` of the previous page, with the same `q` and filters: pages "
        "through every match, with no repeats while new documents arrive",
    )
    min_version: QInt | None = common.min_version()
