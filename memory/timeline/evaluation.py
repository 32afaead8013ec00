"""Evaluations: claim pending inputs, advance the tick, expire due retirements, compile the
active context (R21–R23, R26).
"""

from __future__ import annotations

from typing import TypedDict, Unpack, cast

from django.db import IntegrityError, transaction

from memory.broadcast import broadcast_after_commit
from memory.idempotency import check_key, reused
from memory.kinds import EXTERNAL_FACT_KINDS
from memory.locking import context_gate, lock_context_model, refuse_frozen
from memory.models import Context, Evaluation, Event
from memory.pressure import pressure_state
from memory.shapes.evaluation import EvaluationResult
from memory.timeline.compile import compile_active_context
from memory.timeline.events import check_thread
from memory.tx.retirement import apply_due_expiries
from memory.vocabulary import event_ref


class EvaluateOptions(TypedDict, total=False):
    """The keywords of `evaluate_or_replay` (defaults and meaning there), for `evaluate`."""

    thread: str | None
    idempotency_key: str | None
    continuation: bool
    include_instructions: bool
    compile_input: bool


def evaluate(context_id: int, **options: Unpack[EvaluateOptions]) -> EvaluationResult:
    """The result of `evaluate_or_replay`, without saying whether it was a retry."""
    return evaluate_or_replay(context_id, **options)[0]


def evaluate_or_replay(
    context_id: int,
    *,
    thread: str | None = None,
    idempotency_key: str | None = None,
    continuation: bool = False,
    include_instructions: bool = False,
    compile_input: bool = True,
) -> tuple[EvaluationResult, bool]:
    """(result, created): created is false when the idempotency key named an earlier
    evaluation, whose result comes back unchanged (the API answers 200 then, not 201).

    Claim the pending inputs and compile the next model input, under the context row
    lock (R21, R22); due expiries apply in the same database transaction.

    Returns `{id, tick, advanced_tick, view_version, thread, continuation, claimed (refs),
    expired (frame ids)}` and, when compiled, the input's `context`, `text` and `tokens`.
    InvalidRequest for a malformed key or thread; Conflict `idempotency_key_reused` when
    the key names a different evaluation.

    Without `compile_input` nothing is compiled (`context`, `text` and `tokens` are absent
    from the result): replay checks what an evaluation did, not what it showed.

    With `include_instructions` the model protocol's instructions (R45) come ahead of the
    compiled text, and also alone in `instructions`.

    A retry with the same idempotency key returns the first result and changes nothing; a
    continuation claims nothing and never advances the tick (R22).
    """
    check_key(idempotency_key)
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
        return cast(EvaluationResult, {**existing.result, "id": existing.pk}), False


@transaction.atomic
def _evaluate(
    context_id: int,
    thread: str | None,
    idempotency_key: str | None,
    continuation: bool,
    include_instructions: bool = False,
    compile_input: bool = True,
) -> tuple[EvaluationResult, bool]:
    context = lock_context_model(context_id, allow_frozen=True)  # a retry gets its result
    if idempotency_key is not None:
        earlier = _earlier_result(context, idempotency_key, continuation, thread)
        if earlier is not None:
            return earlier, False
    refuse_frozen(context)
    claimed = _pending_inputs(context, thread) if not continuation else []
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
    result: EvaluationResult = {
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
        _add_model_input(context, result, include_instructions)
    evaluation.result = result
    evaluation.save(update_fields=["result"])
    if advanced or claimed:
        _announce(context, expired, result["claimed"])
    return result, True


def _announce(context: Context, expired: list[str], claimed: list[str]) -> None:
    """Tell the explorer's live view, once committed, what the evaluation claimed and retired."""
    message = {
        "type": "tick",
        "tick": context.tick,
        "version": context.version,
        "expired": expired,
        "claimed": claimed,
    }
    broadcast_after_commit(context.slug, message)


def _earlier_result(
    context: Context, idempotency_key: str, continuation: bool, thread: str | None
) -> EvaluationResult | None:
    """The result of the evaluation that used this key, when one did; Conflict when it was a
    different evaluation (another thread, or continuation and not)."""
    existing = Evaluation.objects.filter(context=context, idempotency_key=idempotency_key).first()
    if existing is None:
        return None
    if existing.continuation != continuation or (thread or "main") != existing.thread:
        raise reused(idempotency_key, f"a different evaluation ({existing.pk})")
    return cast(EvaluationResult, {**existing.result, "id": existing.pk})


def _pending_inputs(context: Context, thread: str | None) -> list[tuple[int, int, str]]:
    """The inputs an evaluation claims, oldest first: `(pk, seq, kind)` of every pending
    event (of `thread` only, when given)."""
    pending = Event.objects.filter(context=context, pending=True)
    if thread is not None:
        pending = pending.filter(thread=thread)
    return list(pending.order_by("seq").values_list("pk", "seq", "kind"))


def _add_model_input(
    context: Context, result: EvaluationResult, include_instructions: bool
) -> None:
    """Add the compiled model input to `result` (`context`, `text`, `tokens`), with the model
    protocol's instructions ahead of the text and alone in `instructions` when asked (R45)."""
    compiled = compile_active_context(context)
    result["context"] = compiled["context"]
    result["text"] = compiled["text"]
    result["tokens"] = compiled["tokens"]
    if include_instructions:
        from memory.agents.protocol import context_instructions

        result["instructions"] = context_instructions(context)
        result["text"] = result["instructions"] + "\n" + result["text"]
