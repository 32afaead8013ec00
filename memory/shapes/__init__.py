"""The JSON shapes of the answers: one TypedDict and one builder for each, grouped by what
they describe (context, events, frames, history, nodes, receipt, recall, evaluation,
compiled input, pages, versions, erasures, errors, explorer); the common ones importable
from here.

`api/shapes.py` derives the OpenAPI components from these TypedDicts, so a field is declared
once; the few functions that return undeclared JSON are listed in docs/rest.md ("Shapes").
"""

from memory.shapes.context import (
    ContextJson,
    ContextSettings,
    ForkedFrom,
    PressureJson,
    context_json,
    pressure_json,
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
from memory.shapes.frames import FrameJson, WindowView, frame_json, window_view
from memory.shapes.history import (
    RevisionJson,
    TransactionJson,
    revision_json,
    transaction_json,
)
from memory.shapes.nodes import (
    Coverage,
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
from memory.shapes.receipt import (
    PendingRelease,
    ReceiptJson,
    ServedReceipt,
    receipt_json,
    served_receipt,
)

__all__ = [
    "EVENT_ROW_COLUMNS",
    "AppendedEvent",
    "ContextJson",
    "ContextSettings",
    "Coverage",
    "EventChunk",
    "EventHead",
    "EventIdentity",
    "EventJson",
    "EventNode",
    "ForkedFrom",
    "FrameJson",
    "FrameNode",
    "NodeRetire",
    "Observation",
    "PendingRelease",
    "PressureJson",
    "ReceiptJson",
    "RelationJson",
    "RevisionJson",
    "SearchHit",
    "ServedReceipt",
    "TransactionJson",
    "WindowView",
    "appended_event_json",
    "context_json",
    "event_chunk_json",
    "event_head",
    "event_identity",
    "event_json",
    "event_node",
    "frame_json",
    "frame_node",
    "observation_json",
    "pressure_json",
    "receipt_json",
    "relation_json",
    "revision_json",
    "search_hit",
    "served_receipt",
    "transaction_json",
    "window_view",
]
