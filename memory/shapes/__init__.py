"""The JSON shapes of contexts, frame revisions, transactions, events, recall nodes and
search hits: one TypedDict and one builder for each (`context`, `history`, `events`,
`nodes`), all importable from here.

How it works: docs/internals.md, section `memory/shapes/__init__.py`."""

from memory.shapes.context import (
    ContextJson,
    ContextSettings,
    ForkedFrom,
    context_json,
)
from memory.shapes.events import (
    EVENT_ROW_COLUMNS,
    AppendedEvent,
    EventChunk,
    EventHead,
    EventIdentity,
    EventJson,
    Observation,
    appended_event_json,
    event_chunk_json,
    event_head,
    event_identity,
    event_json,
    observation_json,
)
from memory.shapes.history import (
    RevisionJson,
    TransactionJson,
    revision_json,
    transaction_json,
)
from memory.shapes.nodes import (
    EventNode,
    FrameNode,
    NodeRetire,
    RelationJson,
    SearchHit,
    event_node,
    frame_node,
    relation_json,
    search_hit,
)

__all__ = [
    "EVENT_ROW_COLUMNS",
    "AppendedEvent",
    "ContextJson",
    "ContextSettings",
    "EventChunk",
    "EventHead",
    "EventIdentity",
    "EventJson",
    "EventNode",
    "ForkedFrom",
    "FrameNode",
    "NodeRetire",
    "Observation",
    "RelationJson",
    "RevisionJson",
    "SearchHit",
    "TransactionJson",
    "appended_event_json",
    "context_json",
    "event_chunk_json",
    "event_head",
    "event_identity",
    "event_json",
    "event_node",
    "frame_node",
    "observation_json",
    "relation_json",
    "revision_json",
    "search_hit",
    "transaction_json",
]
