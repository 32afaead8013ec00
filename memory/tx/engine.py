"""The transaction engine: validate, apply and commit context transactions (R9–R20).

`submit_transaction` is the one way memory changes. Commits of one context are serialised
by the context row lock (`SELECT ... FOR UPDATE`); rules are decided in `memory.tx.apply`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memory.broadcast import broadcast_after_commit
from memory.errors import Conflict, InvalidRequest, MorphzError, ParseError, RuleViolation
from memory.kinds import COMMITTED, REJECTED
from memory.limits import MAX_OPS
from memory.locking import context_gate, lock_context
from memory.models import Context, Evaluation, TransactionRecord
from memory.pressure import PressureState, pressure_state
from memory.timeline.events import check_thread
from memory.tx import lang as txlang
from memory.tx.apply import ApplyOutcome, TransactionApplier, find_conflicts, referenced_items
from memory.tx.store import SqlLoader, write_commit
from memory.vocabulary import event_ref


@dataclass(frozen=True)
class Author:
    """Who wrote a transaction: an agent token or a signed-in person (R6, R40)."""

    label: str
    kind: str  # "agent" | "person" | "system"


SYSTEM = Author("system", "system")


@dataclass
class CommitResult:
    record_id: int
    event_seq: int
    receipt: dict[str, Any]
    # True when an idempotency key named an earlier commit: nothing was written (R49).
    replayed: bool = False

    @property
    def event_ref(self) -> str:
        return event_ref(self.event_seq)

    @property
    def record(self) -> TransactionRecord:
        return TransactionRecord.objects.get(pk=self.record_id)


def parse_submission(*, text: str | None = None, data: Any = None) -> dict[str, Any]:
    """The JSON form of a submitted transaction, from its text or its JSON form."""
    if (text is None) == (data is None):
        raise InvalidRequest(
            "send either `text` (the S-expression form) or the JSON form, not both"
        )
    if text is not None:
        try:
            return txlang.parse_text(text)
        except txlang.TxParseError as exc:
            raise ParseError(
                str(exc),
                details=[{"line": exc.line, "column": exc.column, "expected": exc.expected}],
            ) from None
    try:
        return txlang.validate_json(data)
    except txlang.TxValidationError as exc:
        raise InvalidRequest(str(exc), details=[{"path": exc.path}]) from None


def check_evaluation(context_id: int, evaluation_id: int | None) -> None:
    """`unknown_evaluation` unless the evaluation (when given) belongs to the context."""
    if (
        evaluation_id is not None
        and not Evaluation.objects.filter(pk=evaluation_id, context_id=context_id).exists()
    ):
        raise InvalidRequest(
            f"evaluation {evaluation_id} does not belong to this context", code="unknown_evaluation"
        )


def submit_transaction(
    context_id: int,
    *,
    text: str | None = None,
    data: Any = None,
    author: Author = SYSTEM,
    thread: str | None = None,
    evaluation_id: int | None = None,
    idempotency_key: str | None = None,
) -> CommitResult:
    """Parse, validate and commit one transaction, or record its rejection and raise.

    Raises ParseError / InvalidRequest (malformed), RuleViolation (a rule broken; details
    list each failing op with its index), Conflict (R20). A rejection is stored too (R6).
    With `idempotency_key` (R49): when this context already committed a transaction under
    the key, the same request returns that commit (`replayed`, nothing written) and another
    request raises Conflict `idempotency_key_reused`. Only commits hold a key: a rejected
    submission may be retried under its key.
    """
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= 200
    ):
        raise InvalidRequest("idempotency_key must be a string of 1-200 characters")
    request_hash = (
        _request_hash(text, data, thread, evaluation_id) if idempotency_key is not None else ""
    )
    # Parsing happens inside the gate too: with one interpreter lock, parsing beside a
    # commit of the same context only slows that commit down (see memory.gate).
    with context_gate(context_id):
        return _submit(
            context_id,
            text=text,
            data=data,
            author=author,
            thread=thread,
            evaluation_id=evaluation_id,
            idempotency=(idempotency_key, request_hash) if idempotency_key is not None else None,
        )


def _request_hash(text: str | None, data: Any, thread: str | None, evaluation: Any) -> str:
    """What a retry must repeat to count as the same request."""
    canonical = json.dumps(
        {"text": text, "data": data, "thread": thread, "evaluation": evaluation},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _submit(
    context_id: int,
    *,
    text: str | None,
    data: Any,
    author: Author,
    thread: str | None,
    evaluation_id: int | None,
    idempotency: tuple[str, str] | None = None,
) -> CommitResult:
    raw_text = text if text is not None else None
    tx: dict[str, Any] | None = None
    try:
        tx = parse_submission(text=text, data=data)
        if len(tx["ops"]) > MAX_OPS:
            raise InvalidRequest(f"a transaction may hold at most {MAX_OPS} operations")
        thread = check_thread(thread or tx.get("thread"))
        # Done before taking the row lock: other processes wait only while `_commit` runs.
        canonical = txlang.to_text(tx)
        return _commit(
            context_id,
            tx,
            canonical,
            author=author,
            thread=thread,
            evaluation_id=evaluation_id,
            idempotency=idempotency,
        )
    except MorphzError as exc:
        _record_rejection(
            context_id,
            tx,
            raw_text,
            data,
            exc,
            author=author,
            thread=thread,
            evaluation_id=evaluation_id,
            idempotency_key=idempotency[0] if idempotency else None,
        )
        raise


@transaction.atomic
def _commit(
    context_id: int,
    tx: dict[str, Any],
    canonical: str,
    *,
    author: Author,
    thread: str,
    evaluation_id: int | None,
    idempotency: tuple[str, str] | None = None,
) -> CommitResult:
    context = lock_context(context_id)
    if idempotency is not None:
        # Under the row lock: a concurrent retry waits for the first and then finds it.
        earlier = _earlier_commit(context.pk, *idempotency)
        if earlier is not None:
            return earlier
    base = tx.get("base_version")
    if base is None:
        base = context.version
    if base > context.version:
        raise InvalidRequest(
            f"base_version {base} is ahead of the context's version {context.version}",
            code="invalid_base_version",
        )
    check_evaluation(context.pk, evaluation_id)

    ops = tx["ops"]
    loader = SqlLoader(context.pk)
    frame_ids, seqs, relation_keys = referenced_items(ops)
    frames = loader.frames(frame_ids)
    events = loader.events(seqs)
    relations = loader.relations_between(relation_keys, frames)

    if base < context.version:
        conflicts = find_conflicts(base, frames, events, relations)
        if conflicts:
            names = ", ".join(
                c.ref
                + (f" (now revision {c.revision}, {c.status})" if c.revision else f" ({c.status})")
                for c in conflicts
            )
            raise Conflict(
                f"changed since base version {base} (now {context.version}): {names}; "
                "re-read them and resubmit against the current version",
                details=[c.as_dict() for c in conflicts],
            )

    new_version = context.version + 1
    outcome = TransactionApplier(
        loader,
        tick=context.tick,
        grace_ticks=context.grace_ticks,
        new_version=new_version,
        reason=tx.get("reason") or "",
        frames=frames,
        events=events,
        relations=relations,
    ).apply(ops)
    if outcome.errors:
        first = outcome.errors[0]
        more = f" (and {len(outcome.errors) - 1} more)" if len(outcome.errors) > 1 else ""
        raise RuleViolation(
            f"transaction rejected, nothing was written: operation {first.index} ({first.op}): "
            f"{first.message}{more}",
            code=first.code,
            details=[e.as_dict() for e in outcome.errors],
        )

    context.version = new_version
    context.last_seq += 1
    context.used_tokens = max(0, context.used_tokens + outcome.token_delta)
    state = pressure_state(context)
    context.in_maintenance = state.in_maintenance
    touched_ids = sorted(
        {f.frame_id for f in outcome.frames.values() if f.touched} | _relation_frame_ids(outcome)
    )
    receipt = _receipt(context.version, context.tick, outcome, state)
    record_pk, event_seq = write_commit(
        context,
        outcome,
        text=canonical,
        ops=ops,
        reason=tx.get("reason") or "",
        base_version=base,
        thread=thread,
        author_label=author.label,
        author_kind=author.kind,
        evaluation_id=evaluation_id,
        receipt=receipt,
        frame_ids=touched_ids,
        idempotency=idempotency,
    )
    broadcast_after_commit(
        context.slug,
        {
            "type": "transaction",
            "version": new_version,
            "tick": context.tick,
            "frames": touched_ids,
            "pressure": receipt["pressure"],
        },
    )
    return CommitResult(record_id=record_pk, event_seq=event_seq, receipt=receipt)


def _earlier_commit(context_pk: int, key: str, request_hash: str) -> CommitResult | None:
    row = (
        TransactionRecord.objects.filter(
            context_id=context_pk, idempotency_key=key, status=COMMITTED
        )
        .values_list("pk", "event__seq", "receipt", "request_hash")
        .first()
    )
    if row is None:
        return None
    pk, seq, receipt, stored_hash = row
    if stored_hash != request_hash:
        raise Conflict(
            f"idempotency_key {key!r} was used for a different transaction "
            f"(committed as transaction {pk}); use a new key for a new transaction",
            code="idempotency_key_reused",
            details=[{"field": "idempotency_key", "transaction": pk}],
        )
    return CommitResult(record_id=pk, event_seq=seq, receipt=dict(receipt or {}), replayed=True)


def _relation_frame_ids(outcome: ApplyOutcome) -> set[str]:
    ids: set[str] = set()
    for key, relation in outcome.relations.items():
        if relation.created or relation.removed:
            ids.update((key.subject, key.object))
    return ids


def _receipt(
    version: int, tick: int, outcome: ApplyOutcome, state: PressureState
) -> dict[str, Any]:
    pending = [
        {"frame": s.frame_id, "tokens": s.token_estimate, "due_tick": s.retire_due_tick}
        for s in outcome.frames.values()
        if s.status == "retiring" and s.touched
    ]
    return {
        "version": version,
        "tick": tick,
        "results": outcome.results,
        "released_tokens": outcome.released_tokens,
        "pending_release": sorted(pending, key=lambda p: p["frame"]),
        "completed_by_successor": outcome.completed_by_successor,
        "pressure": state.as_dict(),
    }


def _record_rejection(
    context_id: int,
    tx: dict[str, Any] | None,
    raw_text: str | None,
    data: Any,
    exc: MorphzError,
    *,
    author: Author,
    thread: str | None,
    evaluation_id: int | None,
    idempotency_key: str | None = None,
) -> None:
    """Store a rejected submission (R6) in its own database transaction.

    A frozen context stores nothing: its refusal is not a rejected transaction."""
    if exc.code == "context_frozen":
        return
    if tx is not None:
        try:
            text = txlang.to_text(tx)
        except Exception:  # printing must never hide the original error
            text = raw_text or ""
    elif raw_text is not None:
        text = raw_text
    else:
        text = json.dumps(data, ensure_ascii=False, default=str)[:100_000]
    base = tx.get("base_version") if tx else None
    with transaction.atomic():
        if not Context.objects.filter(pk=context_id, frozen=False).exists():
            return
        TransactionRecord.objects.create(
            context_id=context_id,
            author=author.label,
            author_kind=author.kind,
            thread=(thread or (tx or {}).get("thread") or "main")[:100],
            base_version=base if isinstance(base, int) else None,
            committed_version=None,
            status=REJECTED,
            reason=((tx or {}).get("reason") or "")[:10_000],
            text=text,
            ops=tx["ops"] if tx else None,
            errors={"code": exc.code, "message": exc.message, "details": exc.details},
            frame_ids=sorted(referenced_items(tx["ops"])[0]) if tx else [],
            evaluation_id=_own_evaluation(context_id, evaluation_id),
            idempotency_key=idempotency_key,
        )


def _own_evaluation(context_id: int, evaluation_id: int | None) -> int | None:
    """The evaluation id when it names an evaluation of this context, else None: a rejection
    record never points at another context's evaluation or at one that does not exist."""
    if evaluation_id is None or isinstance(evaluation_id, bool):
        return None
    if not isinstance(evaluation_id, int) or not 0 < evaluation_id < 2**63:
        return None
    own = Evaluation.objects.filter(pk=evaluation_id, context_id=context_id).exists()
    return evaluation_id if own else None
