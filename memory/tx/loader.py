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
from memory.tx.apply import SUPERSEDES, EventState, FrameState, RelationKey, RelationState

# A frame's state columns, in one order for the loader's SELECT and the writer's INSERT and
# UPDATE; `memory.tx.store._frame_state_values` gives the values in the same order.
FRAME_STATE_COLUMNS = (
    "revision",
    "body",
    "sources",
    "status",
    "protected",
    "retire_requested_tick",
    "retire_due_tick",
    "retire_reason",
    "retire_generation",
    "token_estimate",
)
FRAME_COLUMNS = ("id", "frame_id", *FRAME_STATE_COLUMNS, "created_version", "changed_version")
_FRAME_SELECT = ", ".join(FRAME_COLUMNS)
# What `SqlLoader.load` returns: frames by id, events by seq, relations by key.
Loaded = tuple[dict[str, FrameState], dict[int, EventState], dict[RelationKey, RelationState]]
# `id` is read as `pk`, the EventState field name.
_EVENT_COLUMNS = (
    "pk",
    "seq",
    "kind",
    "is_observation",
    "active",
    "request_state",
    "token_estimate",
    "status_version",
)
_EVENT_SELECT = "id AS pk, " + ", ".join(_EVENT_COLUMNS[1:])
_FRAMES_SQL = (
    f"SELECT {_FRAME_SELECT} FROM memory_frame WHERE context_id = %s AND frame_id = ANY(%s)"  # noqa: S608 - a constant column list; values are parameters
)
_EVENTS_SQL = f"SELECT {_EVENT_SELECT} FROM memory_event WHERE context_id = %s AND seq = ANY(%s)"  # noqa: S608 - a constant column list; values are parameters


def _listed(key: str, cast: str = "text") -> str:
    """SQL for the array under `key` of the names document (the second parameter)."""
    return f"ARRAY(SELECT value::{cast} FROM jsonb_array_elements_text(names.d->'{key}'))"  # noqa: S608 - key and cast are constants of this module


def _rows_as_json(columns: list[str], source: str) -> str:
    """SQL for the rows of `source` as a JSON array of arrays of `columns` (`[]` for none)."""
    return f"(SELECT coalesce(jsonb_agg(jsonb_build_array({', '.join(columns)})), '[]') {source})"


# Frames, events and relations in one statement, one result: a document of rows. Bodies are
# `json` columns that keep their keys' order; they travel as text and are parsed here.
_LOAD_SQL = (
    "SELECT jsonb_build_object("  # noqa: S608 - fixed column lists and keys; values are parameters
    "'frames', "
    + _rows_as_json(
        [c if c != "body" else "body::text" for c in FRAME_COLUMNS],
        "FROM memory_frame WHERE context_id = ctx.id AND frame_id = ANY(" + _listed("frames") + ")",
    )
    + ", 'events', "
    + _rows_as_json(
        ["id", *_EVENT_COLUMNS[1:]],
        "FROM memory_event WHERE context_id = ctx.id AND seq = ANY("
        + _listed("seqs", "bigint")
        + ")",
    )
    + ", 'relations', "
    + _rows_as_json(
        ["r.id", "s.frame_id", "r.name", "o.frame_id", "r.created_version", "r.removed_version"],
        # From the named subjects through the subject index (LATERAL): a prepared statement
        # keeps one plan, which must not scan the relations of every context.
        "FROM memory_frame s CROSS JOIN LATERAL (SELECT * FROM memory_relation x "  # noqa: S608 - fixed SQL from this module's constants
        f"WHERE x.subject_id = s.id AND x.name = ANY({_listed('names')})) AS r "
        "JOIN memory_frame o ON o.id = r.object_id WHERE s.context_id = ctx.id "
        f"AND s.frame_id = ANY({_listed('subjects')}) AND o.context_id = ctx.id "
        f"AND o.frame_id = ANY({_listed('objects')})",
    )
    + ") FROM (SELECT %s::bigint AS id) AS ctx, (SELECT %s::jsonb AS d) AS names"
)


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
    """A `FrameState` from a row selected as `FRAME_COLUMNS`."""
    values = dict(zip(FRAME_COLUMNS, row, strict=True))
    pk = values.pop("id")
    values["body"] = _loads(values["body"])
    values["sources"] = list(_loads(values["sources"]))
    return FrameState(pk=pk, original_status=values["status"], **values)


def _frames_by_id(rows: list[tuple[Any, ...]]) -> dict[str, FrameState]:
    loaded = [_frame_from_row(row) for row in rows]
    return {frame.frame_id: frame for frame in loaded}


def _events_by_seq(rows: list[tuple[Any, ...]]) -> dict[int, EventState]:
    loaded = [EventState(**dict(zip(_EVENT_COLUMNS, row, strict=True))) for row in rows]
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
            cur.execute(_FRAMES_SQL, [self.context_id, sorted(frame_ids)])
            return _frames_by_id(cur.fetchall())

    def events(self, seqs: set[int]) -> dict[int, EventState]:
        """The named events of the context that exist, by sequence number."""
        if not seqs:
            return {}
        with connection.cursor() as cur:
            cur.execute(_EVENTS_SQL, [self.context_id, sorted(seqs)])
            return _events_by_seq(cur.fetchall())

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
            "subjects": sorted({k.subject for k in relation_keys}),
            "objects": sorted({k.object for k in relation_keys}),
            "names": sorted({k.name for k in relation_keys}),
        }
        cur = bound_cursor()
        cur.execute(
            _LOAD_SQL, [self.context_id, json.dumps(names, ensure_ascii=False)], prepare=True
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
            cur.execute(
                "SELECT s.frame_id, o.frame_id FROM memory_relation r "
                "JOIN memory_frame s ON s.id = r.subject_id JOIN memory_frame o ON o.id = r.object_id "
                "WHERE r.context_id = %s AND r.name = %s AND r.removed_version IS NULL AND o.frame_id = ANY(%s)",
                [self.context_id, SUPERSEDES, sorted(object_ids)],
            )
            return [RelationKey(s, SUPERSEDES, o) for s, o in cur.fetchall()]
