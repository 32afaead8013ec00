"""Reading and writing the rows of one commit in few, hand-written SQL statements.

The commit path is the hottest in Morphz (issue 3 targets a p50 near hand-written SQL), so
the engine's loads and writes go through this module instead of the ORM. It decides
nothing: `memory.tx.apply` does. Every function expects the caller to hold the context row
lock (`lock_context`) inside one database transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.tx.apply import (
    SUPERSEDES,
    ApplyOutcome,
    EventState,
    FrameState,
    RelationKey,
    RelationState,
)

FRAME_COLUMNS = (
    "id, frame_id, revision, body, sources, status, protected, retire_requested_tick, "
    "retire_due_tick, retire_reason, retire_generation, token_estimate, created_version, changed_version"
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@dataclass
class LockedContext:
    pk: int
    slug: str
    version: int
    tick: int
    last_seq: int
    grace_ticks: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    used_tokens: int
    in_maintenance: bool
    observation_budget_tokens: int
    frozen: bool = False


def lock_context(context_id: int) -> LockedContext:
    """SELECT ... FOR UPDATE the context row: serialises commits of one context (R20).
    Every write takes it, so it refuses frozen contexts (R54) with ContextFrozen."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT id, slug, version, tick, last_seq, grace_ticks, capacity_tokens, pressure_percent, "
            "maintenance_percent, maintenance_exit_percent, used_tokens, in_maintenance, "
            "observation_budget_tokens, frozen FROM memory_context WHERE id = %s FOR UPDATE",
            [context_id],
        )
        row = cur.fetchone()
    if row is None:
        from memory.errors import NotFound

        raise NotFound(f"context {context_id} does not exist")
    locked = LockedContext(*row)
    if locked.frozen:
        from memory.errors import ContextFrozen

        raise ContextFrozen(locked.slug)
    return locked


def _frame_from_row(row: tuple[Any, ...]) -> FrameState:
    return FrameState(
        pk=row[0],
        frame_id=row[1],
        revision=row[2],
        body=_loads(row[3]),
        sources=list(_loads(row[4])),
        status=row[5],
        protected=row[6],
        retire_requested_tick=row[7],
        retire_due_tick=row[8],
        retire_reason=row[9],
        retire_generation=row[10],
        token_estimate=row[11],
        created_version=row[12],
        changed_version=row[13],
        original_status=row[5],
    )


class SqlLoader:
    """`StateLoader` over one context, for `memory.tx.apply`."""

    def __init__(self, context_id: int) -> None:
        self.context_id = context_id

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]:
        if not frame_ids:
            return {}
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT {FRAME_COLUMNS} FROM memory_frame WHERE context_id = %s AND frame_id = ANY(%s)",
                [self.context_id, sorted(frame_ids)],
            )
            return {row[1]: _frame_from_row(row) for row in cur.fetchall()}

    def events(self, seqs: set[int]) -> dict[int, EventState]:
        if not seqs:
            return {}
        with connection.cursor() as cur:
            cur.execute(
                "SELECT id, seq, kind, is_observation, active, request_state, token_estimate, status_version "
                "FROM memory_event WHERE context_id = %s AND seq = ANY(%s)",
                [self.context_id, sorted(seqs)],
            )
            return {
                row[1]: EventState(
                    pk=row[0],
                    seq=row[1],
                    kind=row[2],
                    is_observation=row[3],
                    active=row[4],
                    request_state=row[5],
                    token_estimate=row[6],
                    status_version=row[7],
                )
                for row in cur.fetchall()
            }

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
            "INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, "
            "base_version, committed_version, status, reason, text, ops, receipt, frame_ids, "
            "event_id, evaluation_id, created_at) VALUES (%s, %s, %s, %s, %s, %s, 'committed', "
            f"%s, %s, %s, %s, %s, {ids.EVENT}, %s, %s) RETURNING id",
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
                "INSERT INTO memory_framerevision (frame_id, revision, body, sources, "
                f"transaction_id, version, created_at) VALUES {rows}",
                params,
            )
        _write_retirements(cur, context, touched, version, ids)
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
            "INSERT INTO memory_indexintent (context_id, frame_id, event_id, created_at) "
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
            "INSERT INTO memory_frame (context_id, frame_id, revision, body, sources, status, "
            "protected, retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
            f"token_estimate, created_version, changed_version, updated_at) VALUES {rows}",
            params,
        )
    for f in outcome.frames.values():
        if not f.touched or f.created:
            continue
        cur.execute(
            "UPDATE memory_frame SET revision = %s, body = %s, sources = %s, status = %s, "
            "protected = %s, retire_requested_tick = %s, retire_due_tick = %s, retire_reason = %s, "
            "retire_generation = %s, token_estimate = %s, changed_version = %s, updated_at = now() "
            "WHERE id = %s",
            [
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
                f.changed_version,
                f.pk,
            ],
        )


def _write_retirements(
    cur: Any, context: LockedContext, touched: list[FrameState], version: int, ids: _Keys
) -> None:
    tick = context.tick
    for f in touched:
        if (f.retire_cancelled or f.retire_completed_early) and f.pk is not None:
            cur.execute(
                "UPDATE memory_retirementrequest SET outcome = %s, resolved_tick = %s, "
                "resolved_version = %s WHERE frame_id = %s AND outcome = 'pending'",
                ["completed" if f.retire_completed_early else "cancelled", tick, version, f.pk],
            )
        if f.retire_requested:
            done = f.status != "retiring"
            due = f.retire_due_tick if f.retire_due_tick is not None else tick
            frame_sql, frame_params = ids.frame(f)
            cur.execute(
                "INSERT INTO memory_retirementrequest (frame_id, generation, requested_tick, "
                "due_tick, reason, requested_version, outcome, resolved_tick, resolved_version) "
                f"VALUES ({frame_sql}, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    *frame_params,
                    f.retire_generation,
                    tick,
                    due,
                    f.retire_reason or "",
                    version,
                    "completed" if done else "pending",
                    tick if done else None,
                    version if done else None,
                ],
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
            "INSERT INTO memory_relation (context_id, subject_id, name, object_id, created_version) "
            f"VALUES {rows}",
            params,
        )
