"""Evaluations: claim pending inputs, advance the tick, expire due retirements, compile the
active context (R21–R23, R26).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from memory.broadcast import broadcast_after_commit
from memory.errors import Conflict, InvalidRequest
from memory.kinds import EXTERNAL_FACT_KINDS
from memory.locking import context_gate, lock_context_model
from memory.models import Evaluation, Event
from memory.pressure import pressure_state
from memory.timeline.compile import compile_active_context
from memory.timeline.events import check_thread
from memory.tx.retirement import apply_due_expiries
from memory.vocabulary import event_ref


def evaluate(
    context_id: int,
    *,
    thread: str | None = None,
    idempotency_key: str | None = None,
    continuation: bool = False,
    include_instructions: bool = False,
    compile_input: bool = True,
) -> dict[str, Any]:
    """Claim the pending inputs and compile the next model input.

    Without `compile_input` nothing is compiled (`context`, `text` and `tokens` are absent
    from the result): replay checks what an evaluation did, not what it showed.

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
                context_id,
                thread_name,
                idempotency_key,
                continuation,
                include_instructions,
                compile_input,
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
        return {**existing.result, "id": existing.pk}


@transaction.atomic
def _evaluate(
    context_id: int,
    thread: str | None,
    idempotency_key: str | None,
    continuation: bool,
    include_instructions: bool = False,
    compile_input: bool = True,
) -> dict[str, Any]:
    context = lock_context_model(context_id)
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
            return {**existing.result, "id": existing.pk}

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
    result: dict[str, Any] = {
        "id": evaluation.pk,
        "tick": context.tick,
        "advanced_tick": advanced,
        "view_version": context.version,
        "thread": evaluation.thread,
        "continuation": continuation,
        "claimed": [event_ref(seq) for _, seq, _ in claimed],
        "expired": expired,
    }
    if compile_input:
        compiled = compile_active_context(context)
        result.update(context=compiled["context"], text=compiled["text"], tokens=compiled["tokens"])
    if include_instructions and compile_input:
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
