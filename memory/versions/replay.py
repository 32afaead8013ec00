"""Replay (R51): the cognitive state rebuilt from the history alone equals the stored state.

The history of a context is its steps in the order they happened:

- every appended event (user messages, tool results, agent messages, external facts,
  actions, recall results) with its text, payload, thread, `delivers` and idempotency key;
- every evaluation, placed after the event that was last when it ran (`Evaluation.last_seq`),
  with its thread, continuation flag and idempotency key; what it claimed, the tick it
  reached and the expiries it applied are *results*, checked, not replayed;
- every committed transaction (its event in the log) with its canonical text, author,
  thread and the evaluation it was written from.

Rejected transactions change nothing and are not replayed (an export carries them as
records). Functions:

- `history_steps(context) -> Iterator[dict]`: the steps, as JSON-able dicts (the export
  format's lines, see docs/history.md).
- `apply_steps(context_id, steps)`: drive the real engine (`append_event`, `register_action`,
  `evaluate`, `submit_transaction`) with them.
- `snapshot(context_id) -> dict`: the state to compare: counters; frames with every
  revision, sources, status, protection and retirement requests (generation, due tick,
  outcome); relations; events' status, pending and request state; evaluations' claims,
  ticks and expiries; committed transactions with their receipts. No database ids and no
  clock times: two contexts with the same history have equal snapshots.
- `compare(expected, actual) -> list[str]`: each difference as `path: expected X, got Y`.
- `verify_context(context) -> list[str]`: replay into a scratch context inside a
  transaction that is rolled back, and compare; [] means the history explains the state.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.db import connection, transaction

from memory.contexts import create_context
from memory.kinds import ACTION, APPENDABLE_KINDS, RECALL_RESULT, TRANSACTION
from memory.models import Context, Evaluation, Event, TransactionRecord
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event, append_recall_result, register_action
from memory.tx.engine import Author, submit_transaction

SETTINGS = (
    "grace_ticks",
    "capacity_tokens",
    "pressure_percent",
    "maintenance_percent",
    "maintenance_exit_percent",
    "observation_budget_tokens",
)


class ReplayError(Exception):
    """A step of the history cannot be applied (the history is inconsistent)."""


# -- the history ---------------------------------------------------------------------------


def _evaluation_step(evaluation: Evaluation, ordinal: int) -> dict[str, Any]:
    place = evaluation.last_seq
    if place is None:  # recorded before evaluations kept their place: after what they claimed
        place = max(evaluation.claimed_seqs, default=0)
    return {
        "type": "evaluation",
        "n": ordinal,
        "after_seq": place,
        "thread": evaluation.thread,
        "continuation": evaluation.continuation,
        "idempotency_key": evaluation.idempotency_key,
        "claimed": [f"@e{s}" for s in evaluation.claimed_seqs],
        "tick": evaluation.tick,
        "view_version": evaluation.view_version,
    }


def history_steps(context: Context, batch: int = 2000) -> Iterator[dict[str, Any]]:
    """The context's history, oldest first (events streamed in batches)."""
    evaluations = list(
        Evaluation.objects.filter(context=context)
        .order_by("pk")
        .only(
            "pk",
            "last_seq",
            "claimed_seqs",
            "thread",
            "continuation",
            "idempotency_key",
            "tick",
            "view_version",
        )
    )
    ordinal = {e.pk: n for n, e in enumerate(evaluations)}
    pending = [_evaluation_step(e, n) for n, e in enumerate(evaluations)]
    pending.sort(key=lambda s: (s["after_seq"], s["n"]))
    records = {
        r.event_id: r
        for r in TransactionRecord.objects.filter(context=context, status="committed").only(
            "event_id",
            "committed_version",
            "text",
            "author",
            "author_kind",
            "thread",
            "evaluation_id",
            "reason",
            "base_version",
        )
    }
    index = 0
    while index < len(pending) and pending[index]["after_seq"] < 1:
        yield pending[index]
        index += 1
    last = 0
    while True:
        events = list(Event.objects.filter(context=context, seq__gt=last).order_by("seq")[:batch])
        if not events:
            break
        for event in events:
            yield _event_step(event, records, ordinal)
            last = event.seq
            while index < len(pending) and pending[index]["after_seq"] <= event.seq:
                yield pending[index]
                index += 1
    while index < len(pending):
        yield pending[index]
        index += 1


def _event_step(
    event: Event, records: dict[int | None, TransactionRecord], ordinal: dict[int, int]
) -> dict[str, Any]:
    if event.kind == TRANSACTION:
        record = records.get(event.pk)
        if record is None:
            raise ReplayError(f"{event.ref} is a transaction event without its record")
        return {
            "type": "transaction",
            "seq": event.seq,
            "version": record.committed_version,
            "base_version": record.base_version,
            "text": record.text,
            "author": record.author,
            "author_kind": record.author_kind,
            "thread": record.thread,
            "reason": record.reason,
            "evaluation": ordinal.get(record.evaluation_id) if record.evaluation_id else None,
            "created_at": event.created_at.isoformat(),
        }
    return {
        "type": "event",
        "seq": event.seq,
        "kind": event.kind,
        "thread": event.thread,
        "content": event.content,
        "payload": event.payload,
        "delivers": [f"@e{s}" for s in event.delivers],
        "idempotency_key": event.idempotency_key,
        "created_at": event.created_at.isoformat(),
    }


# -- rebuilding ----------------------------------------------------------------------------


def apply_steps(
    context_id: int,
    steps: Iterable[dict[str, Any]],
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Drive the engine with the steps, in order. Raises ReplayError when a step lands
    somewhere else than the history says (another seq, another version)."""
    evaluation_ids: dict[int, int] = {}
    for step in steps:
        kind = step["type"]
        if kind == "event":
            _apply_event(context_id, step)
        elif kind == "evaluation":
            result = evaluate(
                context_id,
                thread=_evaluation_thread(context_id, step),
                idempotency_key=step.get("idempotency_key"),
                continuation=bool(step.get("continuation")),
            )
            evaluation_ids[step["n"]] = result["id"]
        elif kind == "transaction":
            ordinal = step.get("evaluation")
            receipt = submit_transaction(
                context_id,
                text=step["text"],
                author=Author(step.get("author") or "system", step.get("author_kind") or "system"),
                thread=step.get("thread"),
                evaluation_id=evaluation_ids.get(ordinal) if ordinal is not None else None,
            )
            if receipt.event_seq != step["seq"] or receipt.receipt["version"] != step["version"]:
                raise ReplayError(
                    f"transaction @e{step['seq']} (version {step['version']}) replayed as "
                    f"@e{receipt.event_seq} (version {receipt.receipt['version']})"
                )
        else:
            raise ReplayError(f"unknown step type {kind!r}")
        if progress is not None:
            progress(step)


def _apply_event(context_id: int, step: dict[str, Any]) -> None:
    kind = step["kind"]
    thread = step.get("thread")
    key = step.get("idempotency_key")
    if kind in APPENDABLE_KINDS:
        event = append_event(
            context_id,
            kind=kind,
            content=step["content"],
            payload=step.get("payload"),
            thread=thread,
            delivers=list(step.get("delivers") or []),
            idempotency_key=key,
        ).event
    elif kind == ACTION:
        payload = step.get("payload") or {}
        event = register_action(
            context_id,
            name=payload.get("name", step["content"]),
            arguments=payload.get("arguments"),
            thread=thread,
            idempotency_key=key,
        ).event
    elif kind == RECALL_RESULT:
        event = append_recall_result(
            context_id, content=step["content"], payload=step.get("payload"), thread=thread
        )
    else:
        raise ReplayError(f"event kind {kind!r} cannot be appended")
    if event.seq != step["seq"]:
        raise ReplayError(f"@e{step['seq']} replayed as @e{event.seq}")


def _evaluation_thread(context_id: int, step: dict[str, Any]) -> str | None:
    """`evaluate(thread=None)` claims every pending input, `thread="main"` only main's, and
    both store "main": the claimed refs tell which one it was."""
    thread = step.get("thread") or "main"
    if thread != "main" or step.get("continuation"):
        return thread
    pending = set(
        Event.objects.filter(context_id=context_id, pending=True).values_list("seq", "thread")
    )
    claimed = {int(ref[2:]) for ref in step.get("claimed") or []}
    if claimed == {seq for seq, _ in pending}:
        return None
    return "main"


# -- comparing -----------------------------------------------------------------------------


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def snapshot(context_id: int) -> dict[str, Any]:
    """The comparable state of a context (JSON-able; no ids, no clock times)."""
    ctx = Context.objects.get(pk=context_id)
    frames: dict[str, Any] = {}
    for row in _rows(
        "SELECT id, frame_id, revision, body::text, sources::text, status, protected, "
        "retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
        "token_estimate, created_version, changed_version FROM memory_frame "
        "WHERE context_id = %s ORDER BY frame_id",
        [context_id],
    ):
        frames[row[1]] = {
            "pk": row[0],
            "revision": row[2],
            "body": _json(row[3]),
            "sources": _json(row[4]),
            "status": row[5],
            "protected": row[6],
            "retire_requested_tick": row[7],
            "retire_due_tick": row[8],
            "retire_reason": row[9],
            "retire_generation": row[10],
            "tokens": row[11],
            "created_version": row[12],
            "changed_version": row[13],
            "revisions": [],
            "retirements": [],
        }
    by_pk = {f["pk"]: f for f in frames.values()}
    for frame_pk, revision, body, sources, version in _rows(
        "SELECT r.frame_id, r.revision, r.body::text, r.sources::text, r.version "
        "FROM memory_framerevision r JOIN memory_frame f ON f.id = r.frame_id "
        "WHERE f.context_id = %s ORDER BY r.frame_id, r.revision",
        [context_id],
    ):
        by_pk[frame_pk]["revisions"].append([revision, _json(body), _json(sources), version])
    for row in _rows(
        "SELECT q.frame_id, q.generation, q.requested_tick, q.due_tick, q.reason, "
        "q.requested_version, q.outcome, q.resolved_tick, q.resolved_version "
        "FROM memory_retirementrequest q JOIN memory_frame f ON f.id = q.frame_id "
        "WHERE f.context_id = %s ORDER BY q.frame_id, q.generation",
        [context_id],
    ):
        by_pk[row[0]]["retirements"].append(list(row[1:]))
    for frame in frames.values():
        del frame["pk"]
    relations = [
        list(row)
        for row in _rows(
            "SELECT s.frame_id, r.name, o.frame_id, r.created_version, r.removed_version "
            "FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id "
            "JOIN memory_frame o ON o.id = r.object_id WHERE r.context_id = %s "
            "ORDER BY s.frame_id, r.name, o.frame_id, r.created_version",
            [context_id],
        )
    ]
    evaluations = list(
        Evaluation.objects.filter(context_id=context_id)
        .order_by("pk")
        .values_list(
            "pk",
            "thread",
            "continuation",
            "tick",
            "advanced_tick",
            "view_version",
            "claimed_seqs",
            "result",
        )
    )
    ordinal = {row[0]: n for n, row in enumerate(evaluations)}
    events = {}
    for row in _rows(
        "SELECT seq, kind, thread, md5(content), active, status_version, pending, "
        "request_state, delivered_by_seq, delivers, evaluation_id, token_estimate "
        "FROM memory_event WHERE context_id = %s ORDER BY seq",
        [context_id],
    ):
        events[str(row[0])] = [
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            row[6],
            row[7],
            row[8],
            list(row[9]),
            ordinal.get(row[10]) if row[10] is not None else None,
            row[11],
        ]
    transactions = [
        [
            version,
            base,
            text,
            thread,
            author,
            kind,
            reason,
            receipt,
            ordinal.get(evaluation) if evaluation is not None else None,
        ]
        for version, base, text, thread, author, kind, reason, receipt, evaluation in (
            TransactionRecord.objects.filter(context_id=context_id, status="committed")
            .order_by("committed_version")
            .values_list(
                "committed_version",
                "base_version",
                "text",
                "thread",
                "author",
                "author_kind",
                "reason",
                "receipt",
                "evaluation_id",
            )
        )
    ]
    return json.loads(
        json.dumps(
            {
                "counters": {
                    "version": ctx.version,
                    "tick": ctx.tick,
                    "last_seq": ctx.last_seq,
                    "used_tokens": ctx.used_tokens,
                    "in_maintenance": ctx.in_maintenance,
                },
                "frames": frames,
                "relations": relations,
                "events": events,
                "evaluations": [
                    [thread, cont, tick, adv, view, list(claimed), (result or {}).get("expired")]
                    for _pk, thread, cont, tick, adv, view, claimed, result in evaluations
                ],
                "transactions": transactions,
            },
            ensure_ascii=False,
            default=str,
        )
    )


def compare(expected: Any, actual: Any, path: str = "", limit: int = 200) -> list[str]:
    """Every difference, as `path: stored X, replayed Y` (at most `limit`)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                here = f"{where}.{key}" if where else str(key)
                if key not in b:
                    out.append(f"{here}: stored {_short(a[key])}, missing after replay")
                elif key not in a:
                    out.append(f"{here}: not stored, replay has {_short(b[key])}")
                else:
                    walk(a[key], b[key], here)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            out.append(f"{where}: stored {_short(a)}, replayed {_short(b)}")

    walk(expected, actual, path)
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 160 else text[:157] + "..."


class _Rollback(Exception):
    def __init__(self, result: Any) -> None:
        self.result = result


def scratch_slug() -> str:
    return f"replay-{secrets.token_hex(6)}"


def verify_context(
    context: Context, progress: Callable[[dict[str, Any]], None] | None = None
) -> list[str]:
    """Replay the context's history into a scratch context (rolled back) and compare."""
    try:
        with transaction.atomic():
            scratch = create_context(
                scratch_slug(), **{name: getattr(context, name) for name in SETTINGS}
            )
            try:
                apply_steps(scratch.pk, history_steps(context), progress)
            except ReplayError as exc:
                raise _Rollback([f"history: {exc}"]) from None
            except Exception as exc:  # a step the engine refused: the history is inconsistent
                message = getattr(exc, "message", None) or str(exc)
                raise _Rollback([f"history: a step failed on replay: {message}"]) from None
            raise _Rollback(compare(snapshot(context.pk), snapshot(scratch.pk)))
    except _Rollback as done:
        return list(done.result)
