"""Reading and writing the rows of one commit in few, hand-written SQL statements.

The commit path is the hottest in Morphz (issue 3 targets a p50 near hand-written SQL), so
the engine's loads and writes go through this module instead of the ORM. It decides
nothing: `memory.txapply` does. Every function expects the caller to hold the context row
lock (`lock_context`) inside one database transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.txapply import (
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


def lock_context(context_id: int) -> LockedContext:
    """SELECT ... FOR UPDATE the context row: serialises commits of one context (R20)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT id, slug, version, tick, last_seq, grace_ticks, capacity_tokens, pressure_percent, "
            "maintenance_percent, maintenance_exit_percent, used_tokens, in_maintenance "
            "FROM memory_context WHERE id = %s FOR UPDATE",
            [context_id],
        )
        row = cur.fetchone()
    if row is None:
        from memory.errors import NotFound

        raise NotFound(f"context {context_id} does not exist")
    return LockedContext(*row)


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
    """`StateLoader` over one context, for `memory.txapply`."""

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
    event seq). The caller has already advanced `context` (version, last_seq, tokens)."""
    version = context.version
    # Python's clock, like every other event write, so time filters order them all alike.
    now = timezone.now()
    with connection.cursor() as cur:
        cur.execute(
            "INSERT INTO memory_event (context_id, seq, kind, thread, content, payload, created_at, size_chars, "
            "token_estimate, is_observation, active, status_version, pending, delivers) VALUES "
            "(%s, %s, 'transaction', %s, %s, %s, %s, %s, 0, false, false, 0, false, '{}') RETURNING id",
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
        event_pk = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO memory_transactionrecord (context_id, author, author_kind, thread, base_version, "
            "committed_version, status, reason, text, ops, receipt, frame_ids, event_id, evaluation_id, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, 'committed', %s, %s, %s, %s, %s, %s, %s, now()) RETURNING id",
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
                event_pk,
                evaluation_id,
            ],
        )
        record_pk = cur.fetchone()[0]
        _write_frames(cur, context, outcome, version)
        touched = [f for f in outcome.frames.values() if f.touched]
        revised = [f for f in touched if f.revised]
        if revised:
            _insert_many(
                cur,
                "memory_framerevision (frame_id, revision, body, sources, transaction_id, version, created_at)",
                "(%s, %s, %s, %s, %s, %s, now())",
                [
                    (f.pk, f.revision, _json(f.body), _json(f.sources), record_pk, version)
                    for f in revised
                ],
            )
        _write_retirements(cur, context, touched, version)
        _write_relations(cur, context, outcome, version)
        changed_events = [e for e in outcome.events.values() if e.touched]
        if changed_events:
            cur.execute(
                "UPDATE memory_event AS e SET active = v.active, status_version = %s "
                "FROM unnest(%s::bigint[], %s::boolean[]) AS v(id, active) WHERE e.id = v.id",
                [version, [e.pk for e in changed_events], [e.active for e in changed_events]],
            )
        cur.execute(
            "UPDATE memory_context SET version = %s, last_seq = %s, used_tokens = %s, in_maintenance = %s "
            "WHERE id = %s",
            [version, context.last_seq, context.used_tokens, context.in_maintenance, context.pk],
        )
        intents: list[tuple[int, int | None, int | None]] = [
            (context.pk, f.pk, None) for f in touched
        ]
        intents += [(context.pk, None, e.pk) for e in changed_events]
        intents.append((context.pk, None, event_pk))
        _insert_many(
            cur,
            "memory_indexintent (context_id, frame_id, event_id, created_at)",
            "(%s, %s, %s, now())",
            intents,
        )
    return record_pk, context.last_seq


def _insert_many(
    cur: Any, target: str, row_sql: str, rows: list[tuple[Any, ...]], returning: str = ""
) -> list[Any]:
    params: list[Any] = []
    for row in rows:
        params.extend(row)
    cur.execute(
        f"INSERT INTO {target} VALUES {', '.join([row_sql] * len(rows))} {returning}", params
    )
    return cur.fetchall() if returning else []


def _write_frames(cur: Any, context: LockedContext, outcome: ApplyOutcome, version: int) -> None:
    created = [f for f in outcome.frames.values() if f.created]
    if created:
        rows = _insert_many(
            cur,
            "memory_frame (context_id, frame_id, revision, body, sources, status, protected, retire_requested_tick, "
            "retire_due_tick, retire_reason, retire_generation, token_estimate, created_version, changed_version, "
            "updated_at)",
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, now())",
            [
                (
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
                for f in created
            ],
            returning="RETURNING id, frame_id",
        )
        for pk, frame_id in rows:
            outcome.frames[frame_id].pk = pk
    changed = [f for f in outcome.frames.values() if f.touched and not f.created]
    for f in changed:
        cur.execute(
            "UPDATE memory_frame SET revision = %s, body = %s, sources = %s, status = %s, protected = %s, "
            "retire_requested_tick = %s, retire_due_tick = %s, retire_reason = %s, retire_generation = %s, "
            "token_estimate = %s, changed_version = %s, updated_at = now() WHERE id = %s",
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
    cur: Any, context: LockedContext, touched: list[FrameState], version: int
) -> None:
    tick = context.tick
    for f in touched:
        if f.retire_cancelled or f.retire_completed_early:
            cur.execute(
                "UPDATE memory_retirementrequest SET outcome = %s, resolved_tick = %s, resolved_version = %s "
                "WHERE frame_id = %s AND outcome = 'pending'",
                ["completed" if f.retire_completed_early else "cancelled", tick, version, f.pk],
            )
        if f.retire_requested:
            done = f.status != "retiring"
            due = f.retire_due_tick if f.retire_due_tick is not None else tick
            cur.execute(
                "INSERT INTO memory_retirementrequest (frame_id, generation, requested_tick, due_tick, reason, "
                "requested_version, outcome, resolved_tick, resolved_version) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    f.pk,
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


def _write_relations(cur: Any, context: LockedContext, outcome: ApplyOutcome, version: int) -> None:
    removed = [r.pk for r in outcome.relations.values() if r.removed and r.pk is not None]
    if removed:
        cur.execute(
            "UPDATE memory_relation SET removed_version = %s WHERE id = ANY(%s)", [version, removed]
        )
    created = [k for k, r in outcome.relations.items() if r.created]
    if created:
        pks = {f.frame_id: f.pk for f in outcome.frames.values()}
        _insert_many(
            cur,
            "memory_relation (context_id, subject_id, name, object_id, created_version)",
            "(%s, %s, %s, %s, %s)",
            [(context.pk, pks[k.subject], k.name, pks[k.object], version) for k in created],
        )
