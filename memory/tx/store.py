"""Writing the rows of one commit in one statement: the `morphz_write_commit` function.

How it works: docs/internals.md, section `memory/tx/store.py`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db import connection
from django.utils import timezone

from memory.hotsql import bound_cursor, pipeline
from memory.locking import LockedContext
from memory.shapes.receipt import ReceiptJson
from memory.sql import named_row, statements
from memory.tx.apply import ApplyOutcome, FrameState
from memory.tx.retirement import PENDING, OpenedRequest, ResolvedRequest, request_rows


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
    receipt: ReceiptJson
    frame_ids: list[str]  # the frames the commit touched, sorted
    idempotency: tuple[str, str] | None = None  # (key, request hash)


def write_commit(
    context: LockedContext, outcome: ApplyOutcome, row: CommitRow
) -> Callable[[], int]:
    """Write the transaction event, its record and every changed row; returns a function
    giving the record's id (call it once the statement has gone out: at once, or inside a
    group commit after the group's pipeline). The caller has already advanced `context`
    (version, last_seq, tokens, maintenance)."""
    document = _json(commit_document(context, outcome, row))
    cur = bound_cursor()
    try:
        with pipeline():
            cur.execute(statements("memory.tx")["write_commit"], [document], prepare=True)
    except BaseException:
        cur.close()  # nothing to read: the error is the answer
        raise

    def record_id() -> int:
        with connection.wrap_database_errors, cur:
            record = named_row(cur)
        assert record is not None
        return int(record["record_id"])

    return record_id


def _json(value: Any) -> str:
    """A body's or the operations' stored text: the text every other write stores."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class FrameStateRow(TypedDict):
    """A frame's stored state, by column (`FRAME_STATE`, in its order); the body as its JSON
    text."""

    revision: int
    body: str
    sources: list[str]
    status: str
    protected: bool
    retire_requested_tick: int | None
    retire_due_tick: int | None
    retire_reason: str | None
    retire_generation: int
    token_estimate: int


class CreatedFrame(FrameStateRow):
    frame_id: str


class UpdatedFrame(FrameStateRow):
    id: int | None
    changed_version: int


class FrameRef(TypedDict):
    """A frame by row id, or by frame id when this commit creates it (no id yet)."""

    id: int | None
    frame_id: str


class RevisionRow(FrameRef):
    revision: int
    body: str
    sources: list[str]


class RecordRow(TypedDict):
    """The transaction record's own columns."""

    author: str
    author_kind: str
    base_version: int
    reason: str
    ops: str  # JSON text
    receipt: ReceiptJson
    frame_ids: list[str]
    evaluation_id: int | None
    idempotency_key: str | None
    request_hash: str


class RelatedRow(TypedDict):
    """A relation this commit creates: each end by row id, or by frame id when created here."""

    subject_id: int | None
    subject: str
    name: str
    object_id: int | None
    object: str


class EventStatus(TypedDict):
    id: int
    active: bool


class TransactionPayload(TypedDict):
    version: int
    base_version: int


class CommitDocument(TypedDict):
    """What `morphz_write_commit` reads (see `commit_document`)."""

    context: int
    version: int
    tick: int
    seq: int
    now: str
    thread: str
    text: str
    size_chars: int
    payload: TransactionPayload
    record: RecordRow
    created: list[CreatedFrame]
    updated: list[UpdatedFrame]
    revisions: list[RevisionRow]
    pending: str
    resolved: list[ResolvedRequest]
    requested: list[OpenedRequest]
    unrelated: list[int]
    related: list[RelatedRow]
    events: list[EventStatus]
    used_tokens: int
    in_maintenance: bool
    touched: list[FrameRef]


def _frame_state(f: FrameState, body: str) -> FrameStateRow:
    return {
        "revision": f.revision,
        "body": body,
        "sources": f.sources,
        "status": f.status,
        "protected": f.protected,
        "retire_requested_tick": f.retire_requested_tick,
        "retire_due_tick": f.retire_due_tick,
        "retire_reason": f.retire_reason,
        "retire_generation": f.retire_generation,
        "token_estimate": f.token_estimate,
    }


def _frame_ref(f: FrameState) -> FrameRef:
    return {"id": f.pk, "frame_id": f.frame_id}


def _record(row: CommitRow) -> RecordRow:
    return {
        "author": row.author_label,
        "author_kind": row.author_kind,
        "base_version": row.base_version,
        "reason": row.reason,
        "ops": _json(row.ops),
        "receipt": row.receipt,
        "frame_ids": row.frame_ids,
        "evaluation_id": row.evaluation_id,
        "idempotency_key": row.idempotency[0] if row.idempotency else None,
        "request_hash": row.idempotency[1] if row.idempotency else "",
    }


def _updated_row(f: FrameState, body: str) -> UpdatedFrame:
    return {"id": f.pk, **_frame_state(f, body), "changed_version": f.changed_version}


def _revision_row(f: FrameState, body: str) -> RevisionRow:
    return {**_frame_ref(f), "revision": f.revision, "body": body, "sources": f.sources}


def commit_document(
    context: LockedContext, outcome: ApplyOutcome, row: CommitRow
) -> CommitDocument:
    """The JSON document `morphz_write_commit` stores: the transaction event (`seq`, `text`,
    `payload`) and its record (`record`), frames `created` and `updated`, their `revisions`,
    retirement requests `resolved` and `requested`, relations `unrelated` (row ids) and
    `related`, observation `events` retired or restored, the context's counters, and the
    frames `touched` (search index intents). Bodies and operations are JSON text: their
    columns keep the order of keys, which `jsonb` would not. Timestamps are Python's clock,
    like every other event write, so time filters order them all alike."""
    touched = [f for f in outcome.frames.values() if f.touched]
    written = [f for f in outcome.frames.values() if f.touched or f.created]
    bodies = {f.frame_id: _json(f.body) for f in written}  # once each: state and revision
    resolved, requested = request_rows(touched, tick=context.tick, version=context.version)
    return {
        "context": context.pk,
        "version": context.version,
        "tick": context.tick,
        "seq": context.last_seq,
        "now": timezone.now().isoformat(),
        "thread": row.thread,
        "text": row.text,
        "size_chars": len(row.text),
        "payload": {"version": context.version, "base_version": row.base_version},
        "record": _record(row),
        "created": [
            {"frame_id": f.frame_id, **_frame_state(f, bodies[f.frame_id])}
            for f in outcome.frames.values()
            if f.created
        ],
        "updated": [_updated_row(f, bodies[f.frame_id]) for f in touched if not f.created],
        "revisions": [_revision_row(f, bodies[f.frame_id]) for f in touched if f.revised],
        "pending": PENDING,
        "resolved": resolved,
        "requested": requested,
        "unrelated": [r.pk for r in outcome.relations.values() if r.removed and r.pk is not None],
        "related": [
            {
                "subject_id": outcome.frames[k.subject].pk,
                "subject": k.subject,
                "name": k.name,
                "object_id": outcome.frames[k.object].pk,
                "object": k.object,
            }
            for k, r in outcome.relations.items()
            if r.created
        ],
        "events": [{"id": e.pk, "active": e.active} for e in outcome.events.values() if e.touched],
        "used_tokens": context.used_tokens,
        "in_maintenance": context.in_maintenance,
        "touched": [_frame_ref(f) for f in touched],
    }
