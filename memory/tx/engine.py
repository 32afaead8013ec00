"""The transaction engine: validate, apply and commit context transactions (R9–R20).

`submit_transaction` is the one way memory changes. Commits of one context are serialised
by the context row lock (`memory.locking`); rules are decided in `memory.tx.apply`.
A submission is parsed before the lock; under it, `_decide` reads and checks (refusing with
a MorphzError, writing nothing) and `_write` stores. Threads of one process committing on
the same context are grouped into one database transaction (`memory.tx.group`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.db import transaction

from memory.broadcast import broadcast_after_commit
from memory.contexts import send_token_check
from memory.errors import (
    Conflict,
    ErrorCode,
    InvalidRequest,
    MorphzError,
    RuleViolation,
    TokenNotLive,
)
from memory.hotsql import pipeline
from memory.idempotency import check_key, fingerprint, reused
from memory.kinds import COMMITTED
from memory.locking import LockedContext, lock_context, refuse_frozen, send_lock
from memory.models import Evaluation, TransactionRecord
from memory.pressure import PressureState, pressure_state
from memory.shapes.receipt import PendingRelease, ReceiptJson, receipt_json
from memory.tx.apply import (
    ApplyOutcome,
    ConflictItem,
    TransactionApplier,
    find_conflicts,
)
from memory.tx.group import Steps, commit_grouped
from memory.tx.loader import SqlLoader
from memory.tx.preload import GroupLoads, Names
from memory.tx.rejections import record_rejection
from memory.tx.store import CommitRow, write_commit
from memory.tx.submission import parse_submission, thread_and_text
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
    receipt: ReceiptJson
    # True when an idempotency key named an earlier commit: nothing was written (R49).
    replayed: bool = False

    @property
    def event_ref(self) -> str:
        """The transaction event's ref, like "@e43"."""
        return event_ref(self.event_seq)

    @property
    def record(self) -> TransactionRecord:
        """The stored transaction record (one query; no lock)."""
        return TransactionRecord.objects.get(pk=self.record_id)


def check_evaluation(context_id: int, evaluation_id: int | None) -> None:
    """`unknown_evaluation` unless the evaluation (when given) belongs to the context."""
    if (
        evaluation_id is not None
        and not Evaluation.objects.filter(pk=evaluation_id, context_id=context_id).exists()
    ):
        raise InvalidRequest(
            f"evaluation {evaluation_id} does not belong to this context",
            code=ErrorCode.UNKNOWN_EVALUATION,
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
    replaying: bool = False,
    token_id: int | None = None,
) -> CommitResult:
    """Parse, validate and commit one transaction, or record its rejection and raise.

    Raises ParseError / InvalidRequest (malformed), RuleViolation (a rule broken; details
    list each failing op with its index), Conflict (R20). A rejection is stored too (R6).
    With `idempotency_key` (R49): when this context already committed a transaction under
    the key, the same request returns that commit (`replayed`, nothing written) and another
    request raises Conflict `idempotency_key_reused`. Only commits hold a key: a rejected
    submission may be retried under its key. `replaying` (memory.versions.replay only):
    see `memory.tx.submission.thread_and_text`. `token_id`: the agent token of the request,
    checked in the commit's own database transaction; revoked (or its context gone), it
    raises TokenNotLive before anything is decided, and nothing is recorded.
    """
    request_hash = _request_hash(idempotency_key, text, data, thread, evaluation_id)
    tx: dict[str, Any] | None = None
    try:
        # Everything that does not depend on the context's state happens here, before the
        # gate and the row lock: other writers of the context wait only for `_decide` and
        # `_write`.
        tx = parse_submission(text=text, data=data)
        thread, canonical = thread_and_text(tx, thread, replaying=replaying)
        submission = Submission(
            context_id=context_id,
            tx=tx,
            canonical=canonical,
            author=author,
            thread=thread,
            evaluation_id=evaluation_id,
            idempotency=(idempotency_key, request_hash) if idempotency_key is not None else None,
            token_id=token_id,
        )
        return commit_grouped(context_id, submission, _STEPS)
    except TokenNotLive:
        raise  # not the context's caller: nothing is recorded against it
    except MorphzError as exc:
        record_rejection(
            context_id,
            tx,
            text,
            data,
            exc,
            author=author,
            thread=thread,
            evaluation_id=evaluation_id,
            idempotency_key=idempotency_key,
            token_id=token_id,
        )
        raise


@dataclass(frozen=True)
class Submission:
    """A parsed transaction with everything about it that does not depend on state."""

    context_id: int
    tx: dict[str, Any]
    canonical: str  # the text form stored in the event and the record
    author: Author
    thread: str
    evaluation_id: int | None
    idempotency: tuple[str, str] | None  # (key, request hash)
    token_id: int | None = None  # checked live in the commit (see submit_transaction)


@dataclass
class _Decision:
    """A transaction decided under the row lock: what `_write` stores."""

    submission: Submission
    base: int
    outcome: ApplyOutcome


def _request_hash(
    key: str | None, text: str | None, data: Any, thread: str | None, evaluation: Any
) -> str:
    """What a retry under idempotency `key` must repeat to count as the same request ("" with
    no key); InvalidRequest for a key that is not 1-200 characters."""
    if check_key(key) is None:
        return ""
    return fingerprint(text=text, data=data, thread=thread, evaluation=evaluation)


@transaction.atomic
def _commit_alone(submission: Submission) -> CommitResult:
    """One transaction in its own database transaction (or the caller's); its token, when
    it has one, checked once the row lock is granted."""
    if submission.token_id is None:
        context = lock_context(submission.context_id, allow_frozen=True)
    else:
        with pipeline():
            locked = send_lock(submission.context_id, allow_frozen=True)
            # Sent after the lock, read first: a deleted context's token is refused as a
            # token, not as a missing context.
            live = send_token_check(submission.token_id, submission.context_id)
            if not live():
                raise TokenNotLive()
            context = locked()
    decided = _decide(context, submission, None)
    if isinstance(decided, CommitResult):
        return decided
    return _write(context, decided, None)()


def _decide(
    context: LockedContext, submission: Submission, loads: GroupLoads | None
) -> _Decision | CommitResult:
    """Check and apply a transaction against the locked context's state, writing nothing;
    inside a group commit, `loads` holds what the group sent before deciding any.

    Returns what to write, or the earlier commit of a replayed idempotency key; raises the
    MorphzError that refuses it (TokenNotLive, InvalidRequest, Conflict, RuleViolation)."""
    # Alone (`loads` None), `_commit_alone` has checked the token already.
    if loads is not None and submission.token_id is not None and not loads.token_live(submission):
        raise TokenNotLive()
    if submission.idempotency is not None:
        # Under the row lock: a concurrent retry waits for the first and then finds it.
        earlier = _earlier_commit(context.pk, *submission.idempotency)
        if earlier is not None:
            return earlier
    refuse_frozen(context)  # locked with allow_frozen so that a retry gets its first commit
    tx = submission.tx
    base = tx.get("base_version")
    if base is None:
        base = context.version
    if base > context.version:
        raise InvalidRequest(
            f"base_version {base} is ahead of the context's version {context.version}",
            code=ErrorCode.INVALID_BASE_VERSION,
        )
    check_evaluation(context.pk, submission.evaluation_id)
    loader = SqlLoader(context.pk)
    names = Names.of(tx["ops"])
    if loads is None:
        frames, events, relations = loader.load(names.frame_ids, names.seqs, names.relation_keys)
    else:
        frames, events, relations = loads.load(submission, names)
    if base < context.version:
        _raise_conflicts(base, context.version, find_conflicts(base, frames, events, relations))
    outcome = TransactionApplier(
        loader,
        tick=context.tick,
        grace_ticks=context.grace_ticks,
        new_version=context.version + 1,
        reason=tx.get("reason") or "",
        frames=frames,
        events=events,
        relations=relations,
    ).apply(tx["ops"])
    if outcome.errors:
        first = outcome.errors[0]
        more = f" (and {len(outcome.errors) - 1} more)" if len(outcome.errors) > 1 else ""
        raise RuleViolation(
            f"transaction rejected, nothing was written: operation {first.index} ({first.op}): "
            f"{first.message}{more}",
            code=first.code,
            details=[e.as_dict() for e in outcome.errors],
        )
    return _Decision(submission, base, outcome)


def _raise_conflicts(base: int, version: int, conflicts: list[ConflictItem]) -> None:
    if not conflicts:
        return
    names = ", ".join(
        c.ref + (f" (now revision {c.revision}, {c.status})" if c.revision else f" ({c.status})")
        for c in conflicts
    )
    raise Conflict(
        f"changed since base version {base} (now {version}): {names}; "
        "re-read them and resubmit against the current version",
        details=[c.as_dict() for c in conflicts],
    )


def _write(
    context: LockedContext, decided: _Decision, loads: GroupLoads | None
) -> Callable[[], CommitResult]:
    """Advance the locked context by one version and store the decided transaction; returns
    a function giving its result once the statements have gone out (`write_commit`). In a
    group commit, `loads` is told what it changed."""
    submission, outcome = decided.submission, decided.outcome
    context.version += 1
    context.last_seq += 1
    context.used_tokens = max(0, context.used_tokens + outcome.token_delta)
    state = pressure_state(context)
    context.in_maintenance = state.in_maintenance
    touched_ids = sorted(
        {f.frame_id for f in outcome.frames.values() if f.touched} | _relation_frame_ids(outcome)
    )
    receipt = _receipt(context.version, context.tick, outcome, state)
    record_id = write_commit(
        context,
        outcome,
        CommitRow(
            text=submission.canonical,
            ops=submission.tx["ops"],
            reason=submission.tx.get("reason") or "",
            base_version=decided.base,
            thread=submission.thread,
            author_label=submission.author.label,
            author_kind=submission.author.kind,
            evaluation_id=submission.evaluation_id,
            receipt=receipt,
            frame_ids=touched_ids,
            idempotency=submission.idempotency,
        ),
    )
    broadcast_after_commit(
        context.slug,
        {
            "type": "transaction",
            "version": context.version,
            "tick": context.tick,
            "frames": touched_ids,
            "pressure": receipt["pressure"],
        },
    )
    seq = context.last_seq
    if loads is not None:
        loads.wrote(outcome, seq)
    return lambda: CommitResult(record_id=record_id(), event_seq=seq, receipt=receipt)


_STEPS: Steps[Submission, _Decision, CommitResult] = Steps(
    decide=_decide,
    write=_write,
    finished=lambda decided: isinstance(decided, CommitResult),
    alone=_commit_alone,
    begin=GroupLoads,
    prefetch=lambda loads, item: loads.send(item, item.tx["ops"], item.token_id),
)


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
        what = f"a different transaction (committed as transaction {pk}); use a new key"
        raise reused(key, what, [{"field": "idempotency_key", "transaction": pk}])
    return CommitResult(
        record_id=pk, event_seq=seq, receipt=cast(ReceiptJson, dict(receipt or {})), replayed=True
    )


def _relation_frame_ids(outcome: ApplyOutcome) -> set[str]:
    ids: set[str] = set()
    for key, relation in outcome.relations.items():
        if relation.created or relation.removed:
            ids.update((key.subject, key.object))
    return ids


def _receipt(version: int, tick: int, outcome: ApplyOutcome, state: PressureState) -> ReceiptJson:
    pending: list[PendingRelease] = [
        {"frame": s.frame_id, "tokens": s.token_estimate, "due_tick": s.retire_due_tick}
        for s in outcome.frames.values()
        # Each frame this transaction left retiring, a repeated retire's too; a retiring
        # frame always has its due tick (the test only narrows the type).
        if s.status == "retiring"
        and (s.touched or s.frame_id in outcome.retiring_named)
        and s.retire_due_tick is not None
    ]
    return receipt_json(
        version,
        tick,
        outcome.results,
        outcome.released_tokens,
        pending,
        outcome.completed_by_successor,
        state,
    )
