"""Evaluations: claim pending inputs, advance the tick, expire due retirements, compile the
active context (R21–R23, R26).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from memory.broadcast import broadcast_after_commit
from memory.errors import Conflict, ContextFrozen, InvalidRequest
from memory.kinds import EXTERNAL_FACT_KINDS, RETIRED, RETIRING
from memory.locking import context_gate
from memory.models import Context, Evaluation, Event, Frame, IndexIntent, RetirementRequest
from memory.pressure import pressure_state
from memory.timeline.compile import compile_active_context
from memory.timeline.events import check_thread
from memory.tx.retirement import expiry_applies


def evaluate(
    context_id: int,
    *,
    thread: str | None = None,
    idempotency_key: str | None = None,
    continuation: bool = False,
    include_instructions: bool = False,
) -> dict[str, Any]:
    """Claim the pending inputs and compile the next model input.

    With `include_instructions` the model protocol's instructions (R45) come ahead of the
    compiled text, and also alone in `instructions`.

    A retry with the same idempotency key returns the first result and changes nothing; a
    continuation claims nothing and never advances the tick (R22).
    """
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= 200
    ):
        raise InvalidRequest("idempotency_key must be a string of 1-200 characters")
    thread_name = check_thread(thread) if thread else None
    try:
        with context_gate(context_id):
            return _evaluate(
                context_id, thread_name, idempotency_key, continuation, include_instructions
            )
    except IntegrityError:
        # Two requests with one new key raced; the loser returns the winner's result.
        if idempotency_key is None:
            raise
        existing = Evaluation.objects.filter(
            context_id=context_id, idempotency_key=idempotency_key
        ).first()
        if existing is None:
            raise
        return existing.result


@transaction.atomic
def _evaluate(
    context_id: int,
    thread: str | None,
    idempotency_key: str | None,
    continuation: bool,
    include_instructions: bool = False,
) -> dict[str, Any]:
    context = Context.objects.select_for_update().get(pk=context_id)
    if context.frozen:
        raise ContextFrozen(context.slug)
    if idempotency_key is not None:
        existing = Evaluation.objects.filter(
            context=context, idempotency_key=idempotency_key
        ).first()
        if existing is not None:
            if existing.continuation != continuation or (thread or "main") != existing.thread:
                raise Conflict(
                    f"idempotency_key {idempotency_key!r} was used for a different evaluation",
                    code="idempotency_key_reused",
                )
            return existing.result

    claimed: list[tuple[int, int, str]] = []
    if not continuation:
        pending = Event.objects.filter(context=context, pending=True)
        if thread is not None:
            pending = pending.filter(thread=thread)
        claimed = list(pending.order_by("seq").values_list("pk", "seq", "kind"))
    advanced = any(kind in EXTERNAL_FACT_KINDS for _, _, kind in claimed)
    expired: list[str] = []
    if advanced:
        context.tick += 1
        expired = apply_due_expiries(context)
    evaluation = Evaluation.objects.create(
        context=context,
        thread=thread or "main",
        idempotency_key=idempotency_key,
        continuation=continuation,
        tick=context.tick,
        advanced_tick=advanced,
        view_version=context.version,
        claimed_seqs=[seq for _, seq, _ in claimed],
        last_seq=context.last_seq,
        result={},
    )
    if claimed:
        Event.objects.filter(pk__in=[pk for pk, _, _ in claimed]).update(
            pending=False, evaluation=evaluation
        )
    context.in_maintenance = pressure_state(context).in_maintenance
    context.save(update_fields=["tick", "used_tokens", "in_maintenance"])
    compiled = compile_active_context(context)
    result = {
        "id": evaluation.pk,
        "tick": context.tick,
        "advanced_tick": advanced,
        "view_version": context.version,
        "thread": evaluation.thread,
        "continuation": continuation,
        "claimed": [f"@e{seq}" for _, seq, _ in claimed],
        "expired": expired,
        "context": compiled["context"],
        "text": compiled["text"],
        "tokens": compiled["tokens"],
    }
    if include_instructions:
        from memory.agents.protocol import context_instructions

        result["instructions"] = context_instructions(context)
        result["text"] = result["instructions"] + "\n" + result["text"]
    evaluation.result = result
    evaluation.save(update_fields=["result"])
    if advanced or claimed:
        broadcast_after_commit(
            context.slug,
            {
                "type": "tick",
                "tick": context.tick,
                "version": context.version,
                "expired": expired,
                "claimed": result["claimed"],
            },
        )
    return result


def apply_due_expiries(context: Context) -> list[str]:
    """Expire every retirement due at the context's (new) tick. Caller holds the context lock
    and saves the context afterwards (used_tokens changes)."""
    due = list(
        Frame.objects.filter(context=context, status=RETIRING, retire_due_tick__lte=context.tick)
        .order_by("frame_id")
        .values_list("pk", "retire_generation", "revision")
    )
    expired = []
    for pk, generation, revision in due:
        frame_id = expire_retirement(
            context, pk, expected_generation=generation, expected_revision=revision
        )
        if frame_id is not None:
            expired.append(frame_id)
    return expired


def expire_retirement(
    context: Context, frame_pk: int, *, expected_generation: int, expected_revision: int
) -> str | None:
    """Complete one retirement request if it is still the one scheduled (R16).

    Caller holds the context row lock. Returns the frame id when it retired, None when the
    expiry was stale (another thread revised, restored or protected the frame meanwhile).
    """
    frame = Frame.objects.filter(pk=frame_pk, context=context).first()
    if frame is None or not expiry_applies(
        status=frame.status,
        generation=frame.retire_generation,
        revision=frame.revision,
        expected_generation=expected_generation,
        expected_revision=expected_revision,
        due_tick=frame.retire_due_tick,
        tick=context.tick,
    ):
        if frame is not None:
            RetirementRequest.objects.filter(
                frame=frame, generation=expected_generation, outcome="pending"
            ).exclude(frame__status=RETIRING, frame__retire_generation=expected_generation).update(
                outcome="stale", resolved_tick=context.tick, resolved_version=context.version
            )
        return None
    Frame.objects.filter(pk=frame.pk).update(
        status=RETIRED,
        retire_due_tick=None,
        retire_requested_tick=None,
        changed_version=context.version,
    )
    RetirementRequest.objects.filter(
        frame=frame, generation=expected_generation, outcome="pending"
    ).update(outcome="expired", resolved_tick=context.tick, resolved_version=context.version)
    context.used_tokens = max(0, context.used_tokens - frame.token_estimate)
    IndexIntent.objects.create(context=context, frame=frame)
    return frame.frame_id
