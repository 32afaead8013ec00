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


def _each(key: str, cast: str = "text") -> str:
    """SQL for the names under `key` of the names document, one row each (`c.v`)."""
    return f"jsonb_array_elements_text(names.d->'{key}') AS k(t), LATERAL (SELECT k.t::{cast} AS v) AS c"


def _per_name(key: str, cast: str, row_sql: str) -> str:
    """SQL for a JSON array of the rows `row_sql` finds for each name under `key` (`c.v`):
    a correlated subquery per name, which PostgreSQL runs as a lookup per name and never
    turns into a join over the context's rows (`row_sql` yields one JSON array per name)."""
    return (
        f"(SELECT coalesce(jsonb_agg(e), '[]') FROM {_each(key, cast)}, "  # noqa: S608 - constants of this module
        f"LATERAL jsonb_array_elements(coalesce(({row_sql}), '[]')) AS e)"
    )


def _rows_of(columns: list[str], source: str) -> str:
    """SQL for the rows of `source` as a JSON array of arrays of `columns` (null for none)."""
    return f"SELECT jsonb_agg(jsonb_build_array({', '.join(columns)})) {source}"


# Frames, events and relations in one statement, one result: a document of rows. Bodies are
# `json` columns that keep their keys' order; they travel as text and are parsed here.
# Each name is looked up on its own, by equality on a key (`frame_id_unique`,
# `event_seq_unique`, a relation's subject index; no index on the context alone competes).
# The statement is prepared, so it is not planned on every commit, and its plan is kept for
# the connection's life, until ANALYZE changes the statistics, which never happens inside
# one long transaction (an import, a replay). A plan made while the tables held a page or
# two would read the whole table once per name (cheapest then), so the load is planned with
# sequential scans disabled. The setting stays off for the rest of the commit's database
# transaction: everything after the load looks rows up by a key too, and PostgreSQL's own
# foreign-key checks (deferred to the commit, planned once per connection and kept) read
# the whole referenced table for each row when planned while statistics called it empty:
# in a young database that made the first minute of commits 2-5 times slower
# (tests/memory/tx/test_commit_reads_rows_by_key.py).
_INDEX_LOOKUPS_ONLY = "SET LOCAL enable_seqscan = off"
_LOAD_SQL = (
    "SELECT jsonb_build_object("  # noqa: S608 - fixed column lists and keys; values are parameters
    "'frames', "
    + _per_name(
        "frames",
        "text",
        _rows_of(
            [c if c != "body" else "body::text" for c in FRAME_COLUMNS],
            "FROM memory_frame WHERE context_id = ctx.id AND frame_id = c.v",
        ),
    )
    + ", 'events', "
    + _per_name(
        "seqs",
        "bigint",
        _rows_of(
            ["id", *_EVENT_COLUMNS[1:]],
            "FROM memory_event WHERE context_id = ctx.id AND seq = c.v",
        ),
    )
    + ", 'relations', "
    # Each named relation (a [subject, name, object] triple) on its own: every row of it,
    # current and past. The subject and the object are found by their unique keys first,
    # then the relation's rows by the subject's id: each step a lookup by a key, in this
    # order. `OFFSET 0` keeps each step a subquery of its own, so the planner cannot join
    # them in another order: with statistics that say the tables are empty (an ANALYZE
    # of a new or emptied database) it chose to walk all relations and, for each, all
    # frames twice (tests/memory/tx/test_commit_reads_rows_by_key.py).
    + "(SELECT coalesce(jsonb_agg(e), '[]') FROM "
    "jsonb_array_elements(names.d->'relations') AS k(t), LATERAL jsonb_array_elements(coalesce(("
    + _rows_of(
        ["r.id", "s.frame_id", "r.name", "o.frame_id", "r.created_version", "r.removed_version"],
        "FROM (SELECT id, frame_id FROM memory_frame "
        "WHERE context_id = ctx.id AND frame_id = k.t->>0 OFFSET 0) s "
        "CROSS JOIN LATERAL (SELECT id, frame_id FROM memory_frame "
        "WHERE context_id = ctx.id AND frame_id = k.t->>2 OFFSET 0) o "
        "CROSS JOIN LATERAL (SELECT id, name, created_version, removed_version "
        "FROM memory_relation WHERE subject_id = s.id AND object_id = o.id "
        "AND name = k.t->>1 OFFSET 0) r",
    )
    + "), '[]')) AS e)"
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
            "relations": sorted([k.subject, k.name, k.object] for k in relation_keys),
        }
        with bound_cursor() as setting:
            setting.execute(_INDEX_LOOKUPS_ONLY)
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
