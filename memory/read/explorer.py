"""What the explorer page needs on first paint, read in a handful of queries (reads only).

Shapes follow the REST contract (docs/rest.md) so the page's script treats this
snapshot and later API responses alike: a frame is `{id, revision, status, protected, body,
sources, retire}`; events and the context come from the builders the API uses
(memory.shapes). Everything reads the persistent state (R35), never the search index; large
event texts are cut in the database so a 4 MB log is never loaded to draw a page.
"""

from __future__ import annotations

from typing import Any

from memory.kinds import RETIRING
from memory.models import Context, Event, Frame, Relation, TransactionRecord
from memory.read.lists import with_preview
from memory.read.pages import bounded_transaction_queryset, bounded_transactions
from memory.shapes import (
    EventJson,
    RelationJson,
    TransactionJson,
    context_json,
    event_json,
    frame_json,
    relation_json,
    transaction_json,
)
from memory.shapes.explorer import ContextCard, ExplorerSnapshot, context_card
from memory.shapes.frames import FrameJson
from memory.vocabulary import seq_of

RECENT_EVENTS = 60
RECENT_TRANSACTIONS = 40


def context_cards(contexts: list[Context]) -> list[ContextCard]:
    """One card per context for the context list: its `context_json` plus counts of
    `frames` not retired and of those `retiring`."""
    return [
        context_card(
            context_json(c),
            frames=Frame.objects.filter(context=c).exclude(status="retired").count(),
            retiring=Frame.objects.filter(context=c, status=RETIRING).count(),
        )
        for c in contexts
    ]


def _event_rows(context: Context, **filters: Any) -> list[EventJson]:
    return [
        event_json(event, event.preview)  # type: ignore[attr-defined]  # with_preview's annotation
        for event in with_preview(Event.objects.filter(context=context, **filters))
    ]


def recent_events(context: Context, limit: int = RECENT_EVENTS) -> list[EventJson]:
    """The newest `limit` events, oldest first, with previews."""
    rows = _event_rows(context, seq__gt=max(0, context.last_seq - limit))
    return sorted(rows, key=lambda e: e["seq"])


def source_events(context: Context, frames: list[FrameJson]) -> list[EventJson]:
    """The event leaves the frames cite, for the graph's optional source edges."""
    seqs = {seq for frame in frames for seq in map(seq_of, frame["sources"]) if seq is not None}
    return sorted(_event_rows(context, seq__in=seqs), key=lambda e: e["seq"]) if seqs else []


def recent_transactions(
    context: Context, limit: int = RECENT_TRANSACTIONS
) -> list[TransactionJson]:
    """The newest `limit` transactions, oldest first, bounded as the API's list bounds them."""
    queryset = TransactionRecord.objects.filter(context=context).select_related("event")
    records = list(bounded_transaction_queryset(queryset).order_by("-pk")[:limit])
    bounded_transactions(records)
    return [transaction_json(r) for r in reversed(records)]


def live_relations(context: Context) -> list[RelationJson]:
    """Every live relation of the context, as graph edges (the API's relation shape)."""
    rows = (
        Relation.objects.filter(context=context, removed_version__isnull=True)
        .select_related("subject", "object")
        .only(
            "pk",
            "name",
            "created_version",
            "removed_version",
            "subject__frame_id",
            "object__frame_id",
        )
        .order_by("pk")
    )
    return [relation_json(r) for r in rows]


def explorer_snapshot(context: Context) -> ExplorerSnapshot:
    """Everything the explorer draws first: `{context, frames, relations, source_events,
    events, transactions}` (the API's shapes), read without a lock."""
    frames = [
        frame_json(f, context.tick)
        for f in Frame.objects.filter(context=context).order_by("frame_id")
    ]
    return {
        "context": context_json(context),
        "frames": frames,
        "relations": live_relations(context),
        "source_events": source_events(context, frames),
        "events": recent_events(context),
        "transactions": recent_transactions(context),
    }
