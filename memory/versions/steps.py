"""A context's history as steps (R51): what replay, export and import carry.

How it works: docs/internals.md, section `memory/versions/steps.py`."""

from __future__ import annotations

from collections.abc import Iterator

from memory.contexts import SETTINGS_FIELDS, settings_of
from memory.kinds import TRANSACTION
from memory.models import Context, Evaluation, Event, SettingsChange, TransactionRecord
from memory.shapes.exports import (
    EvaluationStep,
    EventStep,
    SettingsStep,
    Step,
    TransactionStep,
)

SETTINGS = SETTINGS_FIELDS


class ReplayError(Exception):
    """A step of the history cannot be applied (the history is inconsistent)."""


# What a history step reads of an evaluation.
_EVALUATION_FIELDS = (
    "pk",
    "last_seq",
    "claimed_seqs",
    "thread",
    "continuation",
    "idempotency_key",
    "tick",
    "view_version",
    "created_at",
)


def ordered_evaluations(context_id: int, *fields: str) -> list[Evaluation]:
    """The context's evaluations in the order they ran (a history names one by its index,
    its ordinal), loaded with what a history step reads and `fields`."""
    return list(
        Evaluation.objects.filter(context_id=context_id)
        .order_by("pk")
        .only(*_EVALUATION_FIELDS, *fields)
    )


def _evaluation_step(evaluation: Evaluation, ordinal: int) -> EvaluationStep:
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
        "created_at": evaluation.created_at.isoformat(),
    }


def initial_settings(context: Context) -> dict[str, int]:
    """The settings the context was created with (its first `SettingsChange`); the present
    settings for a context without a log."""
    first = SettingsChange.objects.filter(context=context).order_by("pk").first()
    if first is not None and first.kind == "created":
        return {name: first.settings[name] for name in SETTINGS if name in first.settings}
    return settings_of(context)


def _placed_steps(context: Context) -> tuple[dict[int, int], list[EvaluationStep | SettingsStep]]:
    """Evaluation ordinals by id, and the evaluations and settings changes in history order
    (each goes after the event `after_seq`; a settings change made when the context had `c`
    evaluations goes before evaluation number `c`)."""
    evaluations = ordered_evaluations(context.pk)
    ordinal = {e.pk: n for n, e in enumerate(evaluations)}
    placed: list[tuple[tuple[int, int, int], EvaluationStep | SettingsStep]] = [
        ((s["after_seq"], n, 1), s)
        for n, s in ((n, _evaluation_step(e, n)) for n, e in enumerate(evaluations))
    ]
    changes = SettingsChange.objects.filter(context=context, kind="changed").order_by("pk")
    for change in changes:
        step: SettingsStep = {
            "type": "settings",
            "after_seq": change.last_seq,
            "evaluations": change.evaluations,
            "version": change.version,
            "settings": change.settings,
        }
        placed.append(((change.last_seq, change.evaluations, 0), step))
    placed.sort(key=lambda pair: pair[0])  # stable: changes with one place keep their order
    return ordinal, [step for _key, step in placed]


def history_steps(context: Context, batch: int = 2000) -> Iterator[Step]:
    """The context's history, oldest first (events streamed in batches); the settings it
    started with are `initial_settings(context)`."""
    ordinal, pending = _placed_steps(context)
    records = {
        r.event_id: r
        for r in TransactionRecord.objects.filter(context=context, status="committed").only(
            "event_id",
            "committed_version",
            "idempotency_key",
            "request_hash",
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
) -> EventStep | TransactionStep:
    if event.kind == TRANSACTION:
        record = records.get(event.pk)
        if record is None:
            raise ReplayError(f"{event.ref} is a transaction event without its record")
        step: TransactionStep = {
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
        if record.idempotency_key is not None:
            step["idempotency_key"] = record.idempotency_key
            step["request_hash"] = record.request_hash
        return step
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
