"""The SQL that writes events: one statement inserts the events, their search index intents
and the context's new counters (appends are the API's most frequent write). Callers hold the
context row lock (memory.locking.lock_context)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection

from memory.hotsql import bound_cursor
from memory.locking import LockedContext
from memory.models import Event
from memory.sql import named_row, named_rows, statements
from memory.sql.columns import EVENT_ALL


def insert_event(context: LockedContext, event: Event) -> int:
    """Insert the event, its index intent and the context's new counters in one round trip
    (appends are the API's most frequent write). Caller holds the context row lock."""
    with connection.cursor() as cur:
        cur.execute(
            statements("memory.timeline")["insert_event"],
            [
                *_event_values(context, event),
                context.pk,
                event.created_at,
                context.last_seq,
                context.used_tokens,
                context.in_maintenance,
                context.pk,
            ],
        )
        row = named_row(cur)
    assert row is not None
    return int(row["id"])


def _event_values(context: LockedContext, event: Event) -> list[Any]:
    """The values of one event row shared by the single and the bulk insert, in the order
    context_id … request_state (status_version is the literal 0 in both statements)."""
    return [
        context.pk,
        event.seq,
        event.kind,
        event.thread,
        event.content,
        None if event.payload is None else json.dumps(event.payload, ensure_ascii=False),
        event.created_at,
        event.idempotency_key,
        event.size_chars,
        event.token_estimate,
        event.is_observation,
        event.active,
        event.pending,
        event.delivers,
        event.request_state,
    ]


# The columns `_event_values` gives, in its order: the row's own (status_version is a
# literal in both statements; delivered_by_seq is the bulk insert's only).
_EVENT_COLUMN_NAMES = [
    c for c in EVENT_ALL if c not in ("id", "status_version", "evaluation_id", "delivered_by_seq")
]


@dataclass(frozen=True)
class Counters:
    """The context's counters just after some event: what an insert stores on its row (the
    maintenance log, a trigger on that row, names the `last_seq` stored with a new flag)."""

    last_seq: int
    used_tokens: int
    in_maintenance: bool

    @classmethod
    def of(cls, context: LockedContext) -> Counters:
        """The context's counters as they are now (copied: later items change the context)."""
        return cls(context.last_seq, context.used_tokens, context.in_maintenance)


def insert_events(
    context: LockedContext, events: list[Event], counters: Counters | None = None
) -> None:
    """Insert a batch of events, their index intents and the context's new counters
    (`counters`, default the context's own: they must be those just after the batch's last
    event) in one round trip; sets each event's pk. Caller holds the context row lock."""
    after = Counters.of(context) if counters is None else counters
    rows = [[*_event_values(context, event)[1:], event.delivered_by_seq] for event in events]
    columns: list[list[Any]] = [list(column) for column in zip(*rows, strict=True)]
    delivers = _EVENT_COLUMN_NAMES.index("delivers") - 1  # context_id is not a column here
    columns[delivers] = ["{" + ",".join(map(str, seqs)) + "}" for seqs in columns[delivers]]
    now = events[-1].created_at
    with connection.wrap_database_errors, bound_cursor() as cur:
        cur.execute(
            statements("memory.timeline")["insert_events"],
            [
                context.pk,
                *columns,
                context.pk,
                now,
                after.last_seq,
                after.used_tokens,
                after.in_maintenance,
                context.pk,
            ],
        )
        ids = {row["seq"]: row["id"] for row in named_rows(cur)}
    for event in events:
        event.pk = ids[event.seq]
