"""The answers of recall (a page of the graph walk) and search (ranked hits with the index's
lag): their nodes and hits are built in memory.shapes.nodes."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from memory.shapes.fields import OPAQUE, Doc
from memory.shapes.nodes import EventNode, FrameNode, SearchHit

# `from` is a Python keyword: the edge is declared in the functional form.
RecallEdge = TypedDict("RecallEdge", {"from": str, "to": str, "kind": str, "name": str | None})


class RecallPage(TypedDict):
    offset: int
    count: int
    bytes: int


class NewObservation(TypedDict):
    ref: str
    seq: int


class RecallJson(TypedDict):
    nodes: Annotated[
        list[FrameNode | EventNode],
        OPAQUE,
        Doc('{"type": "frame" | "event", "id" or "ref", ...}'),
    ]
    edges: Annotated[
        list[RecallEdge],
        OPAQUE,
        Doc('{"from", "to", "kind": "source" | "relation", "name"}'),
    ]
    next_cursor: str | None
    version: int
    observation: NotRequired[
        Annotated[
            NewObservation | None,
            OPAQUE,
            Doc("`{ref, seq}` of the recall_result observation, when `as_observation`"),
        ]
    ]
    page: Annotated[RecallPage, OPAQUE]
    frame_id: Annotated[str, Doc("the frame the walk starts from")]
    depth: int
    direction: str


class IndexerStatus(TypedDict):
    state: str  # running, restarting, down, unsupervised
    restarts: int
    last_exit: int | None


class IndexLag(TypedDict):
    pending_intents: int
    oldest_pending_seconds: float
    indexer: IndexerStatus


class SearchQuery(TypedDict):
    q: str
    tokens: list[str]
    ignored: list[str]


class SearchJson(TypedDict):
    hits: Annotated[
        list[SearchHit],
        OPAQUE,
        Doc(
            "best first: `{type, id | ref, status, kind, thread, score, snippet, next}`; "
            "`coverage: {matched, borrowed, missing, share}` (the query's content words it "
            "holds, holds only through the turn it answers, lacks), and `answers` (that "
            "turn's ref) when it borrowed words"
        ),
    ]
    lag: Annotated[
        IndexLag,
        OPAQUE,
        Doc(
            "how far the index is behind the facts: `{pending_intents, "
            "oldest_pending_seconds, indexer: {state, restarts, last_exit}}`"
        ),
    ]
    total: Annotated[
        int, Doc("documents matching, counted up to 1000 (`total_exact` false beyond)")
    ]
    total_exact: bool
    next_offset: Annotated[
        int | None,
        Doc("`offset` of the next page, null on the last and on a `cursor`'s pages"),
    ]
    next_cursor: Annotated[
        str | None,
        Doc(
            "the next page, bound to this query and to the documents as of the first page "
            "(no repeats, no skips); null on the last"
        ),
    ]
    query: Annotated[
        SearchQuery,
        OPAQUE,
        Doc(
            "`{q, tokens, ignored}`: the query as sent, the words searched for (function "
            "words dropped, at most 32) and the words of a longer question past those, ignored"
        ),
    ]


class ReadResult(TypedDict):
    """A read a reply asked for: the `recall_result` observation it entered as, and what
    it read (a recall page, search hits, a frame or an event chunk)."""

    ref: str
    result: Any
