"""Replay (R51): the cognitive state rebuilt from the history alone equals the stored state.

How it works: docs/internals.md, section `memory/versions/replay.py`."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.db import OperationalError, connection, transaction

from memory.contexts import create_context, update_context_settings
from memory.kinds import ACTION, APPENDABLE_KINDS, RECALL_RESULT
from memory.limits import MAX_BULK_EVENTS
from memory.models import Context, Event
from memory.shapes.exports import Snapshot, Step
from memory.sql import named_row, statements
from memory.timeline.bulk import append_events
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event, append_recall_result, register_action
from memory.tx.engine import Author, submit_transaction
from memory.versions.snapshot import compare, snapshot
from memory.versions.steps import SETTINGS, ReplayError, history_steps, initial_settings

log = logging.getLogger(__name__)

__all__ = [
    "SETTINGS",
    "ReplayError",
    "apply_steps",
    "compare",
    "history_steps",
    "scratch_context",
    "snapshot",
    "unsynchronised_commits",
    "verify_context",
]

Progress = Callable[[Mapping[str, Any]], None]
# A step as `history_steps` gives it or an export file holds it (checked as it is applied).
StepLine = Mapping[str, Any]


def apply_steps(
    context_id: int,
    steps: Iterable[StepLine],
    progress: Progress | None = None,
    *,
    compile_inputs: bool = True,
    before: Callable[[StepLine], None] | None = None,
) -> None:
    """Drive the engine with the steps, in order. Raises ReplayError when a step lands
    somewhere else than the history says (another seq, another version).

    Without `compile_inputs` evaluations compile no model input (verifying compares what
    they did; an import keeps the inputs for `GET evaluations/{id}/`). `before` is called
    ahead of each step that is not a plain append (an import restores records there)."""
    evaluation_ids: dict[int, int] = {}
    run: list[StepLine] = []  # plain appends waiting for one bulk append

    def flush() -> None:
        _append_run(context_id, run, progress)
        run.clear()

    for step in steps:
        kind = step["type"]
        if kind == "event" and step["kind"] in APPENDABLE_KINDS:
            run.append(step)
            if len(run) >= MAX_BULK_EVENTS:
                flush()
            continue
        flush()
        if before is not None:
            before(step)
        if kind == "event":
            _apply_event(context_id, step)
        elif kind == "evaluation":
            result = evaluate(
                context_id,
                thread=_evaluation_thread(context_id, step),
                idempotency_key=step.get("idempotency_key"),
                continuation=bool(step.get("continuation")),
                compile_input=compile_inputs,
            )
            evaluation_ids[step["n"]] = result["id"]
        elif kind == "transaction":
            _apply_transaction(context_id, step, evaluation_ids)
        elif kind == "settings":
            _apply_settings(context_id, step)
        else:
            raise ReplayError(f"unknown step type {kind!r}")
        if progress is not None:
            progress(step)
    flush()


def _append_run(context_id: int, run: list[StepLine], progress: Progress | None) -> None:
    """Append a run of plain events in one bulk append (the same as appending them one by
    one, R50: a maintenance change is logged at the event that made it)."""
    if not run:
        return
    if len(run) == 1:
        _apply_event(context_id, run[0])
        if progress is not None:
            progress(run[0])
        return
    results = append_events(
        context_id,
        [
            {
                "kind": s["kind"],
                "content": s["content"],
                "payload": s.get("payload"),
                "thread": s.get("thread"),
                "delivers": list(s.get("delivers") or []),
                "idempotency_key": s.get("idempotency_key"),
            }
            for s in run
        ],
        replaying=True,
    )
    for step, result in zip(run, results, strict=True):
        if not result.created or result.event.seq != step["seq"]:
            raise ReplayError(f"@e{step['seq']} replayed as {result.event.ref}")
        if progress is not None:
            progress(step)


def _apply_transaction(context_id: int, step: StepLine, evaluation_ids: dict[int, int]) -> None:
    ordinal = step.get("evaluation")
    receipt = submit_transaction(
        context_id,
        text=step["text"],
        author=Author(step.get("author") or "system", step.get("author_kind") or "system"),
        thread=step.get("thread"),
        evaluation_id=evaluation_ids.get(ordinal) if ordinal is not None else None,
        replaying=True,
    )
    if receipt.event_seq != step["seq"] or receipt.receipt["version"] != step["version"]:
        raise ReplayError(
            f"transaction @e{step['seq']} (version {step['version']}) replayed as "
            f"@e{receipt.event_seq} (version {receipt.receipt['version']})"
        )


def _apply_settings(context_id: int, step: StepLine) -> None:
    """A settings change, through the one function that changes settings."""
    settings = step.get("settings") or {}
    context = update_context_settings(
        context_id, **{name: settings[name] for name in SETTINGS if name in settings}
    )
    if context.version != step["version"]:
        raise ReplayError(
            f"a settings change of version {step['version']} replayed at version {context.version}"
        )


def _apply_event(context_id: int, step: StepLine) -> None:
    """One event through the engine's single append."""
    kind = step["kind"]
    thread = step.get("thread")
    if kind in APPENDABLE_KINDS:
        event = append_event(
            context_id,
            kind=kind,
            content=step["content"],
            payload=step.get("payload"),
            thread=thread,
            delivers=list(step.get("delivers") or []),
            idempotency_key=step.get("idempotency_key"),
            replaying=True,
        ).event
    elif kind == ACTION:
        payload: Mapping[str, Any] = step.get("payload") or {}
        event = register_action(
            context_id,
            name=payload.get("name", step["content"]),
            arguments=payload.get("arguments"),
            thread=thread,
            idempotency_key=step.get("idempotency_key"),
        ).event
    elif kind == RECALL_RESULT:
        event = append_recall_result(
            context_id, content=step["content"], payload=step.get("payload"), thread=thread
        )
    else:
        raise ReplayError(f"event kind {kind!r} cannot be appended")
    if event.seq != step["seq"]:
        raise ReplayError(f"@e{step['seq']} replayed as @e{event.seq}")


def _evaluation_thread(context_id: int, step: StepLine) -> str | None:
    """`evaluate(thread=None)` claims every pending input, `thread="main"` only main's, and
    both store "main": the claimed refs tell which one it was."""
    thread = step.get("thread") or "main"
    if thread != "main" or step.get("continuation"):
        return thread
    pending = set(
        Event.objects.filter(context_id=context_id, pending=True).values_list("seq", flat=True)
    )
    claimed = {int(ref[2:]) for ref in step.get("claimed") or []}
    return None if claimed == pending else "main"


def _sql(name: str) -> str:
    return statements("memory.versions")[name]


# -- verifying -----------------------------------------------------------------------------


def scratch_slug(prefix: str = "replay") -> str:
    """A fresh slug for a scratch context, like `replay-3f9a1c2b7d4e`."""
    return f"{prefix}-{secrets.token_hex(6)}"


class _Rollback(Exception):
    pass


@contextmanager
def scratch_context(settings: dict[str, Any], prefix: str = "replay") -> Iterator[Context]:
    """A context to replay into, gone afterwards. Inside a transaction it lives in a
    savepoint that is rolled back; outside, it is a real context written in autocommit with
    `synchronous_commit` off and deleted at the end (whatever happens)."""
    if connection.in_atomic_block:
        try:
            with transaction.atomic():
                yield create_context(scratch_slug(prefix), scratch=True, **settings)
                raise _Rollback
        except _Rollback:
            return
    with unsynchronised_commits(), building_scratch(prefix, settings) as scratch:
        yield scratch


SCRATCH_LOCK = 0x6D7A  # advisory lock class: (SCRATCH_LOCK, context id) held by its builder


@contextmanager
def building_scratch(prefix: str, settings: dict[str, Any]) -> Iterator[Context]:
    """A scratch context (Context.scratch) built in autocommit and purged afterwards. Its
    builder holds the session advisory lock (SCRATCH_LOCK, id) meanwhile, so a process
    that died building one (a SIGKILLed import) is told apart from a live one by
    `purge_abandoned_scratch`, whose lock attempt succeeds only once the builder's
    database session has ended."""
    purge_abandoned_scratch()
    context = create_context(scratch_slug(prefix), scratch=True, **settings)
    with connection.cursor() as cur:
        cur.execute(_sql("scratch_lock"), {"class": SCRATCH_LOCK, "ctx": context.pk})
    try:
        yield context
    finally:
        try:
            if Context.objects.filter(pk=context.pk, scratch=True).exists():
                purge_scratch(context.pk)
        finally:
            with connection.cursor() as cur:
                cur.execute(_sql("scratch_unlock"), {"class": SCRATCH_LOCK, "ctx": context.pk})


def purge_abandoned_scratch() -> list[str]:
    """Remove every scratch context whose builder is gone (its advisory lock is free);
    returns their slugs. Run at `serve` start and before each import or replay."""
    removed = []
    for pk, slug in Context.objects.filter(scratch=True).values_list("pk", "slug"):
        with connection.cursor() as cur:
            cur.execute(_sql("scratch_try_lock"), {"class": SCRATCH_LOCK, "ctx": pk})
            if not (named_row(cur) or {}).get("locked"):
                continue  # its builder is alive
        try:
            purge_scratch(pk)
            removed.append(slug)
        finally:
            with connection.cursor() as cur:
                cur.execute(_sql("scratch_unlock"), {"class": SCRATCH_LOCK, "ctx": pk})
    if removed:
        log.warning(
            "removed %d scratch context(s) left by a stopped import or replay: %s",
            len(removed),
            ", ".join(removed),
        )
    return removed


# Every table holding a context's rows, children first (foreign keys are checked at commit).
# The index intents go first: deleting them waits for an indexer batch that claimed them, so
# the documents that batch wrote are committed, and seen, when the next statement deletes the
# documents (deleting documents first missed them: the commit then failed on a foreign key).
_PURGE = (
    "purge_retirementrequest",
    "purge_framerevision",
    "purge_indexintent",
    "purge_searchpart",
    "purge_searchdocument",
    "purge_searchlanguage",
    "purge_framechange",
    "purge_eventchange",
    "purge_maintenancechange",
    "purge_settingschange",
    "purge_relation",
    "purge_frame",
    "purge_transactionrecord",
    "purge_event",
    "purge_evaluation",
    "purge_apitoken",
    "purge_forked_from",
    "purge_context",
)


def purge_scratch(context_id: int, attempts: int = 5) -> None:
    """Delete a scratch context with one statement per table (`delete_context` goes through
    Django's collector, a fifth of a replay at 60,000 events).

    The search indexer may be working on the same rows: a deadlock or serialization failure
    (SQLSTATE 40P01, 40001) rolls the purge back and it runs again, up to `attempts` times
    (then the last error is raised)."""
    for attempt in range(attempts):
        try:
            with transaction.atomic(), connection.cursor() as cur:
                for name in _PURGE:
                    cur.execute(_sql(name), {"c": context_id})
            return
        except OperationalError as exc:
            state = getattr(exc.__cause__, "sqlstate", None)
            if state not in ("40P01", "40001") or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


@contextmanager
def unsynchronised_commits() -> Iterator[None]:
    """The session's commits do not wait for the disk meanwhile (a crash may lose the last
    ones, never corrupt anything): for rows that are thrown away or checked at the end."""
    with connection.cursor() as cur:
        cur.execute(_sql("synchronous_commit_off"))
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute(_sql("synchronous_commit_reset"))


def read_history(context: Context) -> tuple[list[Step], Snapshot, dict[str, int]]:
    """The history's steps, the stored state and the settings the context started with,
    read from one database snapshot."""
    nested = connection.in_atomic_block
    with transaction.atomic():
        if not nested:  # the first statement of the transaction
            with connection.cursor() as cur:
                cur.execute(_sql("repeatable_read"))
        return list(history_steps(context)), snapshot(context.pk), initial_settings(context)


def verify_context(context: Context, progress: Progress | None = None) -> list[str]:
    """Replay the context's history into a scratch context and compare the two states;
    each difference as `path: stored X, replayed Y` ([] when the history explains it)."""
    steps, expected, settings = read_history(context)
    with scratch_context(settings) as scratch:
        try:
            apply_steps(scratch.pk, steps, progress, compile_inputs=False)
        except ReplayError as exc:
            return [f"history: {exc}"]
        except Exception as exc:  # a step the engine refused: the history is inconsistent
            message = getattr(exc, "message", None) or str(exc)
            return [f"history: a step failed on replay: {message}"]
        return compare(expected, snapshot(scratch.pk))
    return []  # unreachable: the scratch context always yields
