"""Loading what a transaction names, under the context row lock, in hand-written SQL.

`SqlLoader` is the engine's `StateLoader` (`memory.tx.apply`): frames, events and relations
as the working copy's types. `memory.tx.store` writes the outcome with the same columns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.db import connection

from memory.hotsql import bound_cursor, pipeline
from memory.sql import by_name, named_rows, statements
from memory.sql.columns import EVENT_LOADED, FRAME_LOADED
from memory.tx.apply import SUPERSEDES, EventState, FrameState, RelationKey, RelationState

# What `SqlLoader.load` returns: frames by id, events by seq, relations by key.
Loaded = tuple[dict[str, FrameState], dict[int, EventState], dict[RelationKey, RelationState]]


def _sql(name: str) -> str:
    return statements("memory.tx")[name]


def _relations(
    rows: list[tuple[Any, ...]], wanted: set[RelationKey]
) -> dict[RelationKey, RelationState]:
    """Each wanted relation's state from its rows: live (with the live row's id) or not, and
    the last version at which it was created or removed."""
    found: dict[RelationKey, RelationState] = {}
    for pk, subject, name, obj, created, removed in rows:
        key = RelationKey(subject, name, obj)
        if key not in wanted:
            continue
        state = found.setdefault(key, RelationState(key=key, live=False, changed_version=0))
        state.changed_version = max(state.changed_version, created, removed or 0)
        if removed is None:
            state.live = True
            state.pk = pk
    return found


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _frame_from_row(row: tuple[Any, ...]) -> FrameState:
    """A `FrameState` from a row of `FRAME_LOADED`'s columns."""
    values = by_name(FRAME_LOADED, row)
    pk = values.pop("id")
    values["body"] = _loads(values["body"])
    values["sources"] = list(_loads(values["sources"]))
    return FrameState(pk=pk, original_status=values["status"], **values)


def _event_from_row(row: tuple[Any, ...]) -> EventState:
    """An `EventState` from a row of `EVENT_LOADED`'s columns (`id` is its `pk`)."""
    values = by_name(EVENT_LOADED, row)
    return EventState(pk=values.pop("id"), **values)


def _frames_by_id(rows: list[tuple[Any, ...]]) -> dict[str, FrameState]:
    loaded = [_frame_from_row(row) for row in rows]
    return {frame.frame_id: frame for frame in loaded}


def _events_by_seq(rows: list[tuple[Any, ...]]) -> dict[int, EventState]:
    loaded = [_event_from_row(row) for row in rows]
    return {event.seq: event for event in loaded}


class SqlLoader:
    """`StateLoader` over one context, for `memory.tx.apply`."""

    def __init__(self, context_id: int) -> None:
        self.context_id = context_id

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]:
        """The named frames of the context that exist, by frame id (any status)."""
        if not frame_ids:
            return {}
        with connection.cursor() as cur:
            cur.execute(_sql("frames_by_id"), [self.context_id, sorted(frame_ids)])
            return _frames_by_id(cur.fetchall())

    def load(self, frame_ids: set[str], seqs: set[int], relation_keys: set[RelationKey]) -> Loaded:
        """The named frames, events and relations (current and past rows of each relation
        between two existing frames), in one round trip."""
        with pipeline():
            return self.send(frame_ids, seqs, relation_keys)()

    def send(
        self, frame_ids: set[str], seqs: set[int], relation_keys: set[RelationKey]
    ) -> Callable[[], Loaded]:
        """`load`'s statement sent inside an open `pipeline()` without waiting; returns a
        function that reads its result (what `load` returns) when called."""
        names = {
            "frames": sorted(frame_ids),
            "seqs": sorted(seqs),
            "relations": sorted([k.subject, k.name, k.object] for k in relation_keys),
        }
        with bound_cursor() as setting:
            setting.execute(_sql("index_lookups_only"))
        cur = bound_cursor()
        cur.execute(
            _sql("load"), [self.context_id, json.dumps(names, ensure_ascii=False)], prepare=True
        )

        def read() -> Loaded:
            with connection.wrap_database_errors, cur:
                row = cur.fetchone()
            assert row is not None
            loaded = _loads(row[0])  # Django reads jsonb as text
            return (
                _frames_by_id(loaded["frames"]),
                _events_by_seq(loaded["events"]),
                _relations(loaded["relations"], relation_keys),
            )

        return read

    def supersedes_into(self, object_ids: set[str]) -> list[RelationKey]:
        """The live `supersedes` relations pointing at any of `object_ids` (R17.s
        successor rule reads them)."""
        with connection.cursor() as cur:
            cur.execute(_sql("supersedes_into"), [self.context_id, SUPERSEDES, sorted(object_ids)])
            rows = named_rows(cur)
        return [RelationKey(row["subject"], SUPERSEDES, row["object"]) for row in rows]
