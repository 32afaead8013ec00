"""The transaction engine: validate, apply and commit context transactions (R9–R20).

`submit_transaction` is the one way memory changes. Commits of one context are serialised
by the context row lock (`SELECT ... FOR UPDATE`); rules are decided in `memory.txapply`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory import txlang
from memory.broadcast import broadcast_after_commit
from memory.errors import Conflict, InvalidRequest, MorphzError, ParseError, RuleViolation
from memory.kinds import COMMITTED, REJECTED, TRANSACTION
from memory.models import (
    Context,
    Event,
    Frame,
    FrameRevision,
    IndexIntent,
    Relation,
    RetirementRequest,
    TransactionRecord,
)
from memory.pressure import pressure_state
from memory.txapply import (
    SUPERSEDES,
    ApplyOutcome,
    EventState,
    FrameState,
    RelationKey,
    RelationState,
    TransactionApplier,
    find_conflicts,
    referenced_items,
)

MAX_OPS = 500


@dataclass(frozen=True)
class Author:
    """Who wrote a transaction: an agent token or a signed-in person (R6, R40)."""

    label: str
    kind: str  # "agent" | "person" | "system"


SYSTEM = Author("system", "system")


@dataclass
class CommitResult:
    record: TransactionRecord
    receipt: dict[str, Any]


class DatabaseLoader:
    """Loads the cognitive state a transaction names, for one context."""

    def __init__(self, context: Context) -> None:
        self.context = context

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]:
        if not frame_ids:
            return {}
        rows = Frame.objects.filter(context=self.context, frame_id__in=frame_ids)
        return {row.frame_id: _frame_state(row) for row in rows}

    def events(self, seqs: set[int]) -> dict[int, EventState]:
        if not seqs:
            return {}
        rows = Event.objects.filter(context=self.context, seq__in=seqs).only(
            "pk", "seq", "kind", "is_observation", "active", "request_state", "token_estimate", "status_version"
        )
        return {
            row.seq: EventState(
                seq=row.seq,
                kind=row.kind,
                is_observation=row.is_observation,
                active=row.active,
                request_state=row.request_state,
                token_estimate=row.token_estimate,
                status_version=row.status_version,
                pk=row.pk,
            )
            for row in rows
        }

    def relations(self, keys: set[RelationKey]) -> dict[RelationKey, RelationState]:
        if not keys:
            return {}
        condition = Q()
        for key in keys:
            condition |= Q(subject__frame_id=key.subject, name=key.name, object__frame_id=key.object)
        rows = (
            Relation.objects.filter(context=self.context)
            .filter(condition)
            .values_list("pk", "subject__frame_id", "name", "object__frame_id", "created_version", "removed_version")
        )
        found: dict[RelationKey, RelationState] = {}
        for pk, subject, name, obj, created, removed in rows:
            key = RelationKey(subject, name, obj)
            state = found.setdefault(key, RelationState(key=key, live=False, changed_version=0))
            state.changed_version = max(state.changed_version, created, removed or 0)
            if removed is None:
                state.live = True
                state.pk = pk
        return found

    def supersedes_into(self, object_ids: set[str]) -> list[RelationKey]:
        rows = Relation.objects.filter(
            context=self.context,
            name=SUPERSEDES,
            removed_version__isnull=True,
            object__frame_id__in=object_ids,
        ).values_list("subject__frame_id", "object__frame_id")
        return [RelationKey(s, SUPERSEDES, o) for s, o in rows]


def _frame_state(row: Frame) -> FrameState:
    return FrameState(
        frame_id=row.frame_id,
        revision=row.revision,
        body=row.body,
        sources=list(row.sources),
        status=row.status,
        protected=row.protected,
        retire_requested_tick=row.retire_requested_tick,
        retire_due_tick=row.retire_due_tick,
        retire_reason=row.retire_reason,
        retire_generation=row.retire_generation,
        token_estimate=row.token_estimate,
        created_version=row.created_version,
        changed_version=row.changed_version,
        pk=row.pk,
        original_status=row.status,
    )


def parse_submission(*, text: str | None = None, data: Any = None) -> dict[str, Any]:
    """The JSON form of a submitted transaction, from its text or its JSON form."""
    if (text is None) == (data is None):
        raise InvalidRequest("send either `text` (the S-expression form) or the JSON form, not both")
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


def submit_transaction(
    context_id: int,
    *,
    text: str | None = None,
    data: Any = None,
    author: Author = SYSTEM,
    thread: str | None = None,
    evaluation_id: int | None = None,
) -> CommitResult:
    """Parse, validate and commit one transaction, or record its rejection and raise.

    Raises ParseError / InvalidRequest (malformed), RuleViolation (a rule broken; details
    list each failing op with its index), Conflict (R20). A rejection is stored too (R6).
    """
    raw_text = text if text is not None else None
    tx: dict[str, Any] | None = None
    try:
        tx = parse_submission(text=text, data=data)
        if len(tx["ops"]) > MAX_OPS:
            raise InvalidRequest(f"a transaction may hold at most {MAX_OPS} operations")
        return _commit(context_id, tx, author=author, thread=thread or tx.get("thread") or "main", evaluation_id=evaluation_id)
    except MorphzError as exc:
        _record_rejection(context_id, tx, raw_text, data, exc, author=author, thread=thread, evaluation_id=evaluation_id)
        raise


@transaction.atomic
def _commit(
    context_id: int, tx: dict[str, Any], *, author: Author, thread: str, evaluation_id: int | None
) -> CommitResult:
    context = Context.objects.select_for_update().get(pk=context_id)
    base = tx.get("base_version")
    if base is None:
        base = context.version
    if base > context.version:
        raise InvalidRequest(
            f"base_version {base} is ahead of the context's version {context.version}",
            code="invalid_base_version",
        )
    if evaluation_id is not None:
        from memory.models import Evaluation

        if not Evaluation.objects.filter(pk=evaluation_id, context=context).exists():
            raise InvalidRequest(f"evaluation {evaluation_id} does not belong to this context", code="unknown_evaluation")

    ops = tx["ops"]
    loader = DatabaseLoader(context)
    frame_ids, seqs, relation_keys = referenced_items(ops)
    frames = loader.frames(frame_ids)
    events = loader.events(seqs)
    relations = loader.relations(relation_keys)

    if base < context.version:
        conflicts = find_conflicts(base, frames, events, relations)
        if conflicts:
            names = ", ".join(
                f"{c.ref}" + (f" (now revision {c.revision}, {c.status})" if c.revision else f" ({c.status})")
                for c in conflicts
            )
            raise Conflict(
                f"changed since base version {base} (now {context.version}): {names}; "
                "re-read them and resubmit against the current version",
                details=[c.as_dict() for c in conflicts],
            )

    new_version = context.version + 1
    applier = TransactionApplier(
        loader,
        tick=context.tick,
        grace_ticks=context.grace_ticks,
        new_version=new_version,
        reason=tx.get("reason") or "",
        frames=frames,
        events=events,
        relations=relations,
    )
    outcome = applier.apply(ops)
    if outcome.errors:
        codes = sorted({e.code for e in outcome.errors})
        first = outcome.errors[0]
        raise RuleViolation(
            f"transaction rejected, nothing was written: operation {first.index} ({first.op}): "
            f"{first.message}" + (f" (and {len(outcome.errors) - 1} more)" if len(outcome.errors) > 1 else ""),
            code=codes[0] if len(codes) == 1 else outcome.errors[0].code,
            details=[e.as_dict() for e in outcome.errors],
        )

    context.version = new_version
    context.last_seq += 1
    context.used_tokens = max(0, context.used_tokens + outcome.token_delta)
    state = pressure_state(context)
    context.in_maintenance = state.in_maintenance

    canonical = txlang.to_text({**tx, "base_version": tx.get("base_version")})
    now = timezone.now()
    event = Event.objects.create(
        context=context,
        seq=context.last_seq,
        kind=TRANSACTION,
        thread=thread,
        content=canonical,
        payload={"version": new_version, "base_version": base},
        size_chars=len(canonical),
        created_at=now,
    )
    touched_ids = sorted({f.frame_id for f in outcome.frames.values() if f.touched} | _relation_frame_ids(outcome))
    record = TransactionRecord.objects.create(
        context=context,
        author=author.label,
        author_kind=author.kind,
        thread=thread,
        base_version=base,
        committed_version=new_version,
        status=COMMITTED,
        reason=tx.get("reason") or "",
        text=canonical,
        ops=ops,
        frame_ids=touched_ids,
        event=event,
        evaluation_id=evaluation_id,
    )
    _write_outcome(context, outcome, record, new_version)
    receipt = _receipt(context, outcome, state)
    record.receipt = receipt
    record.save(update_fields=["receipt"])
    context.save(update_fields=["version", "last_seq", "used_tokens", "in_maintenance"])
    IndexIntent.objects.create(context=context, event=event)
    broadcast_after_commit(
        context.slug,
        {"type": "transaction", "version": new_version, "tick": context.tick, "frames": touched_ids, "pressure": receipt["pressure"]},
    )
    return CommitResult(record=record, receipt=receipt)


def _relation_frame_ids(outcome: ApplyOutcome) -> set[str]:
    ids: set[str] = set()
    for key, relation in outcome.relations.items():
        if relation.created or relation.removed:
            ids.update((key.subject, key.object))
    return ids


def _write_outcome(context: Context, outcome: ApplyOutcome, record: TransactionRecord, version: int) -> None:
    frames = outcome.frames
    new_rows = []
    for state in frames.values():
        if state.created:
            new_rows.append(
                Frame(
                    context=context,
                    frame_id=state.frame_id,
                    revision=state.revision,
                    body=state.body,
                    sources=state.sources,
                    status=state.status,
                    protected=state.protected,
                    retire_requested_tick=state.retire_requested_tick,
                    retire_due_tick=state.retire_due_tick,
                    retire_reason=state.retire_reason,
                    retire_generation=state.retire_generation,
                    token_estimate=state.token_estimate,
                    created_version=version,
                    changed_version=version,
                )
            )
    if new_rows:
        for row in Frame.objects.bulk_create(new_rows):
            frames[row.frame_id].pk = row.pk
    for state in frames.values():
        if state.touched and not state.created:
            Frame.objects.filter(pk=state.pk).update(
                revision=state.revision,
                body=Frame._meta.get_field("body").get_prep_value(state.body),
                sources=state.sources,
                status=state.status,
                protected=state.protected,
                retire_requested_tick=state.retire_requested_tick,
                retire_due_tick=state.retire_due_tick,
                retire_reason=state.retire_reason,
                retire_generation=state.retire_generation,
                token_estimate=state.token_estimate,
                changed_version=state.changed_version,
                updated_at=timezone.now(),
            )
    touched = [s for s in frames.values() if s.touched]
    FrameRevision.objects.bulk_create(
        [
            FrameRevision(
                frame_id=s.pk,
                revision=s.revision,
                body=s.body,
                sources=s.sources,
                transaction=record,
                version=version,
            )
            for s in touched
            if s.revised
        ]
    )
    _write_retirements(context, touched, version)
    _write_relations(context, outcome, version)
    for event in outcome.events.values():
        if event.touched:
            Event.objects.filter(pk=event.pk).update(active=event.active, status_version=event.status_version)
    IndexIntent.objects.bulk_create(
        [IndexIntent(context=context, frame_id=s.pk) for s in touched]
        + [IndexIntent(context=context, event_id=e.pk) for e in outcome.events.values() if e.touched]
    )


def _write_retirements(context: Context, touched: list[FrameState], version: int) -> None:
    tick = context.tick
    for state in touched:
        if state.retire_cancelled or state.retire_completed_early:
            outcome = "completed" if state.retire_completed_early else "cancelled"
            RetirementRequest.objects.filter(frame_id=state.pk, outcome="pending").update(
                outcome=outcome, resolved_tick=tick, resolved_version=version
            )
        if state.retire_requested:
            due = state.retire_due_tick if state.retire_due_tick is not None else tick
            done = state.status != "retiring"
            RetirementRequest.objects.create(
                frame_id=state.pk,
                generation=state.retire_generation,
                requested_tick=tick,
                due_tick=due,
                reason=state.retire_reason or "",
                requested_version=version,
                outcome="completed" if done else "pending",
                resolved_tick=tick if done else None,
                resolved_version=version if done else None,
            )


def _write_relations(context: Context, outcome: ApplyOutcome, version: int) -> None:
    created = [(k, r) for k, r in outcome.relations.items() if r.created]
    removed = [r for r in outcome.relations.values() if r.removed and r.pk is not None]
    for relation in removed:
        Relation.objects.filter(pk=relation.pk).update(removed_version=version)
    if not created:
        return
    pks = {s.frame_id: s.pk for s in outcome.frames.values()}
    Relation.objects.bulk_create(
        [
            Relation(
                context=context,
                subject_id=pks[k.subject],
                name=k.name,
                object_id=pks[k.object],
                created_version=version,
            )
            for k, _ in created
        ]
    )


def _receipt(context: Context, outcome: ApplyOutcome, state: Any) -> dict[str, Any]:
    pending = [
        {"frame": s.frame_id, "tokens": s.token_estimate, "due_tick": s.retire_due_tick}
        for s in outcome.frames.values()
        if s.status == "retiring" and s.touched
    ]
    return {
        "version": context.version,
        "tick": context.tick,
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
) -> None:
    """Store a rejected submission (R6) in its own database transaction."""
    if tx is not None:
        try:
            text = txlang.to_text(tx)
        except Exception:  # printing must never hide the original error
            text = raw_text or ""
    elif raw_text is not None:
        text = raw_text
    else:
        import json

        text = json.dumps(data, ensure_ascii=False, default=str)[:100_000]
    base = tx.get("base_version") if tx else None
    with transaction.atomic():
        if not Context.objects.filter(pk=context_id).exists():
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
            evaluation_id=evaluation_id if exc.code != "unknown_evaluation" else None,
        )
