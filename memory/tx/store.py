"""Writing the rows of one commit in few, hand-written SQL statements.

The commit path is the hottest in Morphz (bench/bench_engine.py compares it with the same
writes in hand-written SQL), so the engine's writes go through this module (its loads
through `memory.tx.loader`) instead of the ORM. It decides nothing: `memory.tx.apply` does. Every function expects the caller to
hold the context row lock (`memory.locking.lock_context`) inside one database transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.locking import LockedContext
from memory.tx.apply import ApplyOutcome, EventState, FrameState
from memory.tx.loader import FRAME_STATE_COLUMNS, bound_cursor, pipeline
from memory.tx.retirement import write_requests


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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


@dataclass(frozen=True)
class CommitRow:
    """What a commit's transaction event and record hold besides the outcome."""

    text: str  # the canonical text form
    ops: list[dict[str, Any]]
    reason: str
    base_version: int
    thread: str
    author_label: str
    author_kind: str
    evaluation_id: int | None
    receipt: dict[str, Any]
    frame_ids: list[str]  # the frames the commit touched, sorted
    idempotency: tuple[str, str] | None = None  # (key, request hash)


def write_commit(
    context: LockedContext, outcome: ApplyOutcome, row: CommitRow
) -> Callable[[], int]:
    """Write the transaction event, its record and every changed row; returns a function
    giving the record's id (call it once the statements have gone out: at once, or inside a
    group commit after the group's pipeline). The caller has already advanced `context`
    (version, last_seq, tokens, maintenance).

    All statements go out in one pipeline: rows created here are referred to through their
    unique keys ((context, seq), (context, frame_id), (context, committed_version)) instead
    of ids read back, so the commit costs one round trip to the server, not one per row."""
    # Python's clock, like every other event write, so time filters order them all alike.
    now = timezone.now()
    ids = _Keys(context.pk, context.last_seq, context.version)
    touched = [f for f in outcome.frames.values() if f.touched]
    changed_events = [e for e in outcome.events.values() if e.touched]
    record_cur = bound_cursor()
    try:
        with bound_cursor() as cur, pipeline():
            _insert_event_and_record(cur, record_cur, context, row, ids, now)
            _write_frames(cur, context, outcome, context.version)
            _write_revisions(cur, [f for f in touched if f.revised], ids, now)
            write_requests(
                cur, touched, tick=context.tick, version=context.version, frame_sql=ids.frame
            )
            _write_relations(cur, context, outcome, context.version, ids)
            _write_events_and_context(cur, context, changed_events)
            _write_intents(cur, context.pk, touched, changed_events, ids, now)
    except BaseException:
        record_cur.close()  # nothing to read: the error is the answer
        raise

    def record_id() -> int:
        with connection.wrap_database_errors, record_cur:
            record = record_cur.fetchone()
        assert record is not None
        return int(record[0])

    return record_id


def _insert_event_and_record(
    cur: Any, record_cur: Any, context: LockedContext, row: CommitRow, ids: _Keys, now: Any
) -> None:
    """The `transaction` event at `context.last_seq` and its committed record (RETURNING
    its id on `record_cur`)."""
    cur.execute(
        "INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at, "
        "size_chars, token_estimate, is_observation, active, status_version, pending, delivers) "
        "VALUES (%s, %s, 'transaction', %s, %s, %s, %s, %s, 0, false, false, 0, false, '{}')",
        [
            context.pk,
            context.last_seq,
            row.thread,
            row.text,
            _json({"version": context.version, "base_version": row.base_version}),
            now,
            len(row.text),
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
            row.author_label,
            row.author_kind,
            row.thread,
            row.base_version,
            context.version,
            row.reason,
            row.text,
            _json(row.ops),
            _json(row.receipt),
            row.frame_ids,
            *ids.event(),
            row.evaluation_id,
            now,
            row.idempotency[0] if row.idempotency else None,
            row.idempotency[1] if row.idempotency else "",
        ],
    )


def _write_revisions(cur: Any, revised: list[FrameState], ids: _Keys, now: Any) -> None:
    """One `memory_framerevision` row per frame this commit created or revised."""
    if not revised:
        return
    rows, params = _rows(
        [
            (
                ids.frame(f),
                ("%s", [f.revision]),
                ("%s", [_json(f.body)]),
                ("%s", [_json(f.sources)]),
                (ids.RECORD, ids.record()),
                ("%s", [ids.version]),
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


def _write_events_and_context(
    cur: Any, context: LockedContext, changed_events: list[EventState]
) -> None:
    """Observations retired or restored by the commit, and the context's counters."""
    if changed_events:
        cur.execute(
            "UPDATE memory_event AS e SET active = v.active, status_version = %s "
            "FROM unnest(%s::bigint[], %s::boolean[]) AS v(id, active) WHERE e.id = v.id",
            [
                context.version,
                [e.pk for e in changed_events],
                [e.active for e in changed_events],
            ],
        )
    cur.execute(
        "UPDATE memory_context SET version = %s, last_seq = %s, used_tokens = %s, "
        "in_maintenance = %s WHERE id = %s",
        [
            context.version,
            context.last_seq,
            context.used_tokens,
            context.in_maintenance,
            context.pk,
        ],
    )


def _write_intents(
    cur: Any,
    context_pk: int,
    touched: list[FrameState],
    changed_events: list[EventState],
    ids: _Keys,
    now: Any,
) -> None:
    """Search index intents: every touched frame and event, and the transaction event."""
    intents: list[tuple[SqlValue, SqlValue]] = [(ids.frame(f), ("NULL", [])) for f in touched]
    intents += [(("NULL", []), ("%s", [e.pk])) for e in changed_events]
    intents.append((("NULL", []), (ids.EVENT, ids.event())))
    rows, params = _rows(
        [(("%s", [context_pk]), frame, event, ("%s", [now])) for frame, event in intents]
    )
    cur.execute(
        "INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at) "  # noqa: S608 - rows holds only placeholders and fixed subqueries (_rows)
        f"VALUES {rows}",
        params,
    )


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
