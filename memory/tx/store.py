"""Reading and writing the rows of one commit in few, hand-written SQL statements.

The commit path is the hottest in Morphz (bench/bench_engine.py compares it with the same
writes in hand-written SQL), so the engine's loads and writes go through this module instead
of the ORM. It decides nothing: `memory.tx.apply` does. Every function expects the caller to
hold the context row lock (`memory.locking.lock_context`) inside one database transaction.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.locking import LockedContext
from memory.tx.apply import (
    SUPERSEDES,
    ApplyOutcome,
    EventState,
    FrameState,
    RelationKey,
    RelationState,
)
from memory.tx.retirement import write_requests

# A frame's state columns, in one order for the loader's SELECT and the writer's INSERT and
# UPDATE; `_frame_state_values` gives the values in the same order.
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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _frame_from_row(row: tuple[Any, ...]) -> FrameState:
    """A `FrameState` from a row selected as `FRAME_COLUMNS`."""
    values = dict(zip(FRAME_COLUMNS, row, strict=True))
    pk = values.pop("id")
    values["body"] = _loads(values["body"])
    values["sources"] = list(_loads(values["sources"]))
    return FrameState(pk=pk, original_status=values["status"], **values)


def _frame_state_values(f: FrameState) -> list[Any]:
    """`f`'s values for `FRAME_STATE_COLUMNS`, in that order."""
    return [
        f.revision,
        _json(f.body),
        _json(f.sources),
        f.status,
        f.protected,
        f.retire_requested_tick,
        f.retire_due_tick,
        f.retire_reason,
        f.retire_generation,
        f.token_estimate,
    ]


class SqlLoader:
    """`StateLoader` over one context, for `memory.tx.apply`."""

    def __init__(self, context_id: int) -> None:
        self.context_id = context_id

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]:
        if not frame_ids:
            return {}
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT {_FRAME_SELECT} FROM memory_frame WHERE context_id = %s AND frame_id = ANY(%s)",  # noqa: S608 - a constant column list; values are parameters
                [self.context_id, sorted(frame_ids)],
            )
            loaded = [_frame_from_row(row) for row in cur.fetchall()]
        return {frame.frame_id: frame for frame in loaded}

    def events(self, seqs: set[int]) -> dict[int, EventState]:
        if not seqs:
            return {}
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT {_EVENT_SELECT} FROM memory_event "  # noqa: S608 - a constant column list; values are parameters
                "WHERE context_id = %s AND seq = ANY(%s)",
                [self.context_id, sorted(seqs)],
            )
            loaded = [EventState(**dict(zip(_EVENT_COLUMNS, row, strict=True))) for row in cur]
        return {event.seq: event for event in loaded}

    def relations_between(
        self, keys: set[RelationKey], frames: dict[str, FrameState]
    ) -> dict[RelationKey, RelationState]:
        """Current and past rows of the named relations (only between existing frames)."""
        wanted = {k for k in keys if k.subject in frames and k.object in frames}
        if not wanted:
            return {}
        by_pk = {f.pk: f.frame_id for f in frames.values()}
        with connection.cursor() as cur:
            cur.execute(
                "SELECT id, subject_id, name, object_id, created_version, removed_version FROM memory_relation "
                "WHERE subject_id = ANY(%s) AND object_id = ANY(%s) AND name = ANY(%s)",
                [
                    sorted({frames[k.subject].pk for k in wanted}),
                    sorted({frames[k.object].pk for k in wanted}),
                    sorted({k.name for k in wanted}),
                ],
            )
            rows = cur.fetchall()
        found: dict[RelationKey, RelationState] = {}
        for pk, subject_pk, name, object_pk, created, removed in rows:
            key = RelationKey(by_pk[subject_pk], name, by_pk[object_pk])
            if key not in wanted:
                continue
            state = found.setdefault(key, RelationState(key=key, live=False, changed_version=0))
            state.changed_version = max(state.changed_version, created, removed or 0)
            if removed is None:
                state.live = True
                state.pk = pk
        return found

    def supersedes_into(self, object_ids: set[str]) -> list[RelationKey]:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT s.frame_id, o.frame_id FROM memory_relation r "
                "JOIN memory_frame s ON s.id = r.subject_id JOIN memory_frame o ON o.id = r.object_id "
                "WHERE r.context_id = %s AND r.name = %s AND r.removed_version IS NULL AND o.frame_id = ANY(%s)",
                [self.context_id, SUPERSEDES, sorted(object_ids)],
            )
            return [RelationKey(s, SUPERSEDES, o) for s, o in cur.fetchall()]


def write_commit(
    context: LockedContext,
    outcome: ApplyOutcome,
    *,
    text: str,
    ops: list[dict[str, Any]],
    reason: str,
    base_version: int,
    thread: str,
    author_label: str,
    author_kind: str,
    evaluation_id: int | None,
    receipt: dict[str, Any],
    frame_ids: list[str],
    idempotency: tuple[str, str] | None = None,
) -> tuple[int, int]:
    """Write the transaction event, its record and every changed row; returns (record id,
    event seq). The caller has already advanced `context` (version, last_seq, tokens).

    All statements go out in one pipeline: rows created here are referred to through their
    unique keys ((context, seq), (context, frame_id), (context, committed_version)) instead
    of ids read back, so the commit costs one round trip to the server, not one per row."""
    version = context.version
    # Python's clock, like every other event write, so time filters order them all alike.
    now = timezone.now()
    ids = _Keys(context.pk, context.last_seq, version)
    touched = [f for f in outcome.frames.values() if f.touched]
    changed_events = [e for e in outcome.events.values() if e.touched]
    with connection.cursor() as cur, connection.cursor() as record_cur, pipeline():
        cur.execute(
            "INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at, "
            "size_chars, token_estimate, is_observation, active, status_version, pending, delivers) "
            "VALUES (%s, %s, 'transaction', %s, %s, %s, %s, %s, 0, false, false, 0, false, '{}')",
            [
                context.pk,
                context.last_seq,
                thread,
                text,
                _json({"version": version, "base_version": base_version}),
                now,
                len(text),
            ],
        )
        record_cur.execute(
            "INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, "  # noqa: S608 - _Keys.EVENT is a fixed subquery; values are parameters
            "base_version, committed_version, status, reason, text, ops, receipt, frame_ids, "
            "event_id, evaluation_id, created_at, idempotency_key, request_hash) VALUES "
            "(%s, %s, %s, %s, %s, %s, 'committed', "
            f"%s, %s, %s, %s, %s, {ids.EVENT}, %s, %s, %s, %s) RETURNING id",
            [
                context.pk,
                author_label,
                author_kind,
                thread,
                base_version,
                version,
                reason,
                text,
                _json(ops),
                _json(receipt),
                frame_ids,
                *ids.event(),
                evaluation_id,
                now,
                idempotency[0] if idempotency else None,
                idempotency[1] if idempotency else "",
            ],
        )
        _write_frames(cur, context, outcome, version)
        revised = [f for f in touched if f.revised]
        if revised:
            rows, params = _rows(
                [
                    (
                        ids.frame(f),
                        ("%s", [f.revision]),
                        ("%s", [_json(f.body)]),
                        ("%s", [_json(f.sources)]),
                        (ids.RECORD, ids.record()),
                        ("%s", [version]),
                        ("%s", [now]),
                    )
                    for f in revised
                ]
            )
            cur.execute(
                "INSERT INTO memory_framerevision (frame_id, revision, body, sources, "  # noqa: S608 - rows holds only placeholders and fixed subqueries (_rows)
                f"transaction_id, version, created_at) VALUES {rows}",
                params,
            )
        write_requests(cur, touched, tick=context.tick, version=version, frame_sql=ids.frame)
        _write_relations(cur, context, outcome, version, ids)
        if changed_events:
            cur.execute(
                "UPDATE memory_event AS e SET active = v.active, status_version = %s "
                "FROM unnest(%s::bigint[], %s::boolean[]) AS v(id, active) WHERE e.id = v.id",
                [version, [e.pk for e in changed_events], [e.active for e in changed_events]],
            )
        cur.execute(
            "UPDATE memory_context SET version = %s, last_seq = %s, used_tokens = %s, "
            "in_maintenance = %s WHERE id = %s",
            [
                version,
                context.last_seq,
                context.used_tokens,
                context.in_maintenance,
                context.pk,
            ],
        )
        intents: list[tuple[SqlValue, SqlValue]] = [(ids.frame(f), ("NULL", [])) for f in touched]
        intents += [(("NULL", []), ("%s", [e.pk])) for e in changed_events]
        intents.append((("NULL", []), (ids.EVENT, ids.event())))
        rows, params = _rows(
            [(("%s", [context.pk]), frame, event, ("%s", [now])) for frame, event in intents]
        )
        cur.execute(
            "INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at) "  # noqa: S608 - rows holds only placeholders and fixed subqueries (_rows)
            f"VALUES {rows}",
            params,
        )
        row = record_cur.fetchone()
    assert row is not None
    return int(row[0]), context.last_seq


SqlValue = tuple[str, list[Any]]


class _Keys:
    """SQL that finds this commit's new rows by their unique keys, inside the pipeline."""

    EVENT = "(SELECT id FROM memory_event WHERE context_id = %s AND seq = %s)"
    RECORD = (
        "(SELECT id FROM memory_transactionrecord WHERE context_id = %s AND committed_version = %s)"
    )
    FRAME = "(SELECT id FROM memory_frame WHERE context_id = %s AND frame_id = %s)"

    def __init__(self, context_pk: int, seq: int, version: int) -> None:
        self.context_pk = context_pk
        self.seq = seq
        self.version = version

    def event(self) -> list[Any]:
        return [self.context_pk, self.seq]

    def record(self) -> list[Any]:
        return [self.context_pk, self.version]

    def frame(self, frame: FrameState) -> SqlValue:
        if frame.pk is not None:
            return ("%s", [frame.pk])
        return (self.FRAME, [self.context_pk, frame.frame_id])


def pipeline() -> Any:
    """psycopg's pipeline mode on Django's connection: statements go out without waiting."""
    return connection.connection.pipeline()


def _rows(rows: list[tuple[SqlValue, ...]]) -> tuple[str, list[Any]]:
    """`(a, b), (c, d)` and its parameters from per-value SQL fragments."""
    params: list[Any] = []
    parts = []
    for row in rows:
        parts.append("(" + ", ".join(sql for sql, _ in row) + ")")
        for _, values in row:
            params.extend(values)
    return ", ".join(parts), params


def _write_frames(cur: Any, context: LockedContext, outcome: ApplyOutcome, version: int) -> None:
    columns = ", ".join(FRAME_STATE_COLUMNS)
    created = [f for f in outcome.frames.values() if f.created]
    if created:
        rows, params = _rows(
            [
                (
                    *(
                        ("%s", [value])
                        for value in (
                            context.pk,
                            f.frame_id,
                            *_frame_state_values(f),
                            version,
                            version,
                        )
                    ),
                    ("now()", []),
                )
                for f in created
            ]
        )
        cur.execute(
            f"INSERT INTO memory_frame (context_id, frame_id, {columns}, created_version, "  # noqa: S608 - constant columns; rows holds only placeholders (_rows)
            f"changed_version, updated_at) VALUES {rows}",
            params,
        )
    assignments = ", ".join(f"{column} = %s" for column in FRAME_STATE_COLUMNS)
    for f in outcome.frames.values():
        if not f.touched or f.created:
            continue
        cur.execute(
            f"UPDATE memory_frame SET {assignments}, changed_version = %s, updated_at = now() "  # noqa: S608 - constant columns; values are parameters
            "WHERE id = %s",
            [*_frame_state_values(f), f.changed_version, f.pk],
        )


def _write_relations(
    cur: Any, context: LockedContext, outcome: ApplyOutcome, version: int, ids: _Keys
) -> None:
    removed = [r.pk for r in outcome.relations.values() if r.removed and r.pk is not None]
    if removed:
        cur.execute(
            "UPDATE memory_relation SET removed_version = %s WHERE id = ANY(%s)", [version, removed]
        )
    created = [k for k, r in outcome.relations.items() if r.created]
    if created:
        rows, params = _rows(
            [
                (
                    ("%s", [context.pk]),
                    ids.frame(outcome.frames[k.subject]),
                    ("%s", [k.name]),
                    ids.frame(outcome.frames[k.object]),
                    ("%s", [version]),
                )
                for k in created
            ]
        )
        cur.execute(
            "INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version) "  # noqa: S608 - rows holds only placeholders and fixed subqueries (_rows)
            f"VALUES {rows}",
            params,
        )
