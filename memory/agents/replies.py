"""Taking a model reply apart (R46, R57): the transactions commit through the engine, the
memory reads run, every other tool call is registered as an action, the text is recorded as
an agent message delivering the requests it names.

How it works: docs/internals.md, section `memory/agents/replies.py`."""

from __future__ import annotations

from typing import Any

from memory.agents.commits import Commits, commit_all, part_key
from memory.agents.feedback import render_feedback
from memory.agents.parts import (
    Parts,
    ToolCall,
    check_reply,
    check_tools,
    error_json,
    sort_parts,
)
from memory.agents.reads import run_read
from memory.errors import Conflict, ErrorCode, InvalidRequest, MorphzError, NotFound
from memory.idempotency import REPLY_KEY_MAX, check_key
from memory.kinds import AGENT_MESSAGE, USER_MESSAGE
from memory.models import Context, Event
from memory.shapes.errors import ErrorJson
from memory.shapes.errors import error_json as shaped_error
from memory.shapes.replies import (
    CallOutcome,
    CallStatus,
    MessageOutcome,
    ReplyOutcome,
    ReplyResult,
    TransactionOutcome,
    call_outcome,
    reply_result,
)
from memory.timeline.actions import cancel_action
from memory.timeline.events import append_event, check_thread, register_action
from memory.tx.engine import SYSTEM, Author, check_evaluation
from memory.vocabulary import seq_of

ON_REJECTION = ("withhold", "proceed")


# -- the whole reply --------------------------------------------------------------------


def _failed(entry: CallOutcome, status: CallStatus, error: ErrorJson) -> None:
    entry["status"] = status
    entry["error"] = error


def _run_reads(
    context: Context, reads: list[ToolCall], thread: str, key: str | None
) -> list[CallOutcome]:
    results = []
    for index, call in enumerate(reads):
        entry = call_outcome(call.id, call.name, call.arguments, "ok")
        try:
            context.refresh_from_db()
            read_key = part_key(key, "read", index)
            read = run_read(context, call.name, call.arguments, thread, read_key)
        except MorphzError as exc:
            _failed(entry, "error", error_json(exc))
        except (TypeError, ValueError) as exc:  # arguments of the wrong type for the read
            _failed(entry, "error", shaped_error(ErrorCode.INVALID_ARGUMENTS, str(exc)))
        else:
            entry["ref"] = read["ref"]
            entry["result"] = read["result"]
        results.append(entry)
    return results


def _register_actions(
    context_id: int, parts: Parts, thread: str, key: str | None
) -> list[CallOutcome]:
    """Each cancellation, then each external call through the action gate, each in its own
    database transaction."""
    actions = []
    for index, call in enumerate(parts.cancels):
        args = call.arguments
        entry = call_outcome(call.id, call.name, args, "cancelled")
        try:
            entry["ref"] = cancel_action(
                context_id,
                args.get("ref"),
                reason=args.get("reason"),
                by="agent",
                thread=thread,
                extra=[k for k in args if k not in ("ref", "reason")],
                idempotency_key=part_key(key, "cancel", index),
            ).ref
            entry["cancels"] = args.get("ref")
        except MorphzError as exc:
            _failed(entry, "refused", error_json(exc))
        actions.append(entry)
    for index, call in enumerate(parts.externals):
        entry = call_outcome(call.id, call.name, call.arguments, "registered")
        try:
            entry["ref"] = register_action(
                context_id,
                name=call.name,
                arguments=call.arguments,
                thread=thread,
                idempotency_key=part_key(key, "action", index),
            ).event.ref
        except MorphzError as exc:
            _failed(entry, "refused", error_json(exc))
        actions.append(entry)
    return actions


def _withheld(parts: Parts) -> tuple[list[CallOutcome], MessageOutcome | None]:
    """The actions and message of a rejected reply, written as nothing (R57)."""
    error = shaped_error(
        ErrorCode.REPLY_REJECTED,
        "not written: a transaction of this reply was rejected; fix it and send the whole "
        "reply again",
    )
    actions = []
    for call in [*parts.cancels, *parts.externals]:
        entry = call_outcome(call.id, call.name, call.arguments, "withheld")
        _failed(entry, "withheld", error)
        actions.append(entry)
    message: MessageOutcome | None = None
    if parts.rest or parts.delivers:
        message = {
            "text": parts.rest,
            "ref": None,
            "delivers": [],
            "status": "withheld",
            "error": error,
        }
    return actions, message


def _check_on_rejection(on_rejection: Any) -> None:
    if on_rejection not in ON_REJECTION:
        raise InvalidRequest(
            f"on_rejection must be one of {', '.join(ON_REJECTION)}",
            details=[{"field": "on_rejection"}],
        )


def _checked(
    context_id: int,
    reply: Any,
    thread: str | None,
    evaluation_id: int | None,
    idempotency_key: str | None,
    tools: list[str] | None,
    on_rejection: str,
) -> tuple[Context, Parts, str]:
    """The context, the reply sorted into its parts and its thread; raises InvalidRequest or
    NotFound before anything is written."""
    check_key(idempotency_key, REPLY_KEY_MAX)
    _check_on_rejection(on_rejection)
    text, calls, given_delivers = check_reply(reply)
    tool_names = check_tools(tools)
    thread_given = check_thread(thread) if thread is not None else None
    context = Context.objects.filter(pk=context_id).first()
    if context is None:
        raise NotFound(f"context {context_id} does not exist")
    check_evaluation(context_id, evaluation_id)  # as transactions do: nothing written
    parts = sort_parts(text, calls, given_delivers, tool_names)
    return context, parts, thread_given or _thread_of(context_id, parts.delivers)


def take_apart_reply(
    context_id: int,
    reply: Any,
    *,
    author: Author = SYSTEM,
    thread: str | None = None,
    evaluation_id: int | None = None,
    idempotency_key: str | None = None,
    tools: list[str] | None = None,
    on_rejection: str = "withhold",
) -> ReplyResult:
    """Split a model reply into its parts and send each along its path (module docstring).

    `reply` is `{text, tool_calls: [{id, name, arguments}], delivers}` (arguments an object
    or a JSON string). Returns `{transactions, reads, actions, message, rejected, conflict,
    version, tick, feedback}`; raises InvalidRequest only for a malformed reply (nothing
    written). `tools`: the agent's own tool names; a call to any other name (not a memory
    tool) is refused `unknown_tool` (R59). `on_rejection`: `withhold` (default; R57) or
    `proceed`. `thread`: the reply's thread; without one, the thread of the requests it
    delivers when they share one, else `main`. `idempotency_key` (1-180 characters): a
    retry writes no part twice (module docstring); the same key with another reply gets
    each changed part refused `idempotency_key_reused`.
    """
    context, parts, thread_name = _checked(
        context_id, reply, thread, evaluation_id, idempotency_key, tools, on_rejection
    )
    commits = Commits(
        context_id=context_id,
        author=author,
        thread=thread_name,
        evaluation_id=evaluation_id,
        key=idempotency_key,
    )
    # Memory first: digesting may bring the context out of maintenance before the gate,
    # and the reads see the commit.
    transactions = commit_all(commits, parts)
    rejected = any(t["status"] in ("rejected", "waiting") for t in transactions)
    if any(t["status"] == "rejected" for t in transactions):
        for entry in transactions:
            if entry["status"] == "waiting":
                entry["status"] = "rejected"
    # A rejected reply's reads run without its key: nothing of it stays under the key.
    reads = _run_reads(context, parts.reads, thread_name, None if rejected else idempotency_key)
    rejected = any(t["status"] == "rejected" for t in transactions)
    if rejected and on_rejection == "withhold":
        actions, message = _withheld(parts)
    else:
        actions = _register_actions(context_id, parts, thread_name, idempotency_key)
        message = _record_message(
            context_id,
            parts,
            thread_name,
            (transactions, reads, actions),
            part_key(idempotency_key, "message"),
        )
        for index, entry in enumerate(transactions):
            if entry["status"] == "waiting":  # its request is delivered now
                commits.submit(index, parts.transactions[index][2], entry)
    actions = [*actions, *parts.bad_calls]
    return _answer(context, parts, transactions, reads, actions, message)


def _answer(
    context: Context,
    parts: Parts,
    transactions: list[TransactionOutcome],
    reads: list[CallOutcome],
    actions: list[CallOutcome],
    message: MessageOutcome | None,
) -> ReplyResult:
    """The reply's outcome (see `take_apart_reply`), its feedback rendered last."""
    context.refresh_from_db()
    outcome: ReplyOutcome = {
        "transactions": transactions,
        "reads": reads,
        "actions": actions,
        "message": message,
        "rejected": any(t["status"] == "rejected" for t in transactions),
        "conflict": any(
            t["status"] == "rejected"
            and t["error"] is not None
            and t["error"]["code"] == Conflict.code
            for t in transactions
        ),
        "hints": parts.hints,
        "version": context.version,
        "tick": context.tick,
    }
    return reply_result(outcome, render_feedback(outcome))


def _thread_of(context_id: int, delivers: list[str]) -> str:
    """The thread a reply answers when it names none: that of the requests it delivers,
    when they share one (R57 threads); else `main`."""
    seqs = [s for s in (seq_of(r) for r in delivers) if s is not None]
    if not seqs:
        return check_thread(None)
    threads = set(
        Event.objects.filter(context_id=context_id, seq__in=seqs, kind=USER_MESSAGE).values_list(
            "thread", flat=True
        )
    )
    return threads.pop() if len(threads) == 1 else check_thread(None)


def _record_message(
    context_id: int,
    parts: Parts,
    thread: str,
    outcomes: tuple[list[TransactionOutcome], list[CallOutcome], list[CallOutcome]],
    key: str | None,
) -> MessageOutcome | None:
    text, delivers = parts.rest, parts.delivers
    if not text and not delivers:
        return None
    transactions, reads, actions = outcomes
    payload = {
        "transactions": [t.get("ref") for t in transactions if t.get("ref")],
        "tool_calls": [
            {"id": c["tool_call_id"], "name": c["name"], "ref": c.get("ref")}
            for c in [*reads, *actions]
        ],
    }
    content = text or "(reply delivered)"
    entry: MessageOutcome = {"text": text, "delivers": delivers}

    def append(delivers: list[str], key: str | None) -> Event:
        return append_event(
            context_id,
            kind=AGENT_MESSAGE,
            content=content,
            payload=payload,
            thread=thread,
            delivers=delivers,
            idempotency_key=key,
        ).event

    try:
        event = append(delivers, key)
    except MorphzError as exc:
        entry["delivers"] = []
        if exc.code == ErrorCode.IDEMPOTENCY_KEY_REUSED:
            # Another reply under this key: the message is not written at all.
            entry["ref"] = None
            entry["error"] = error_json(exc)
            return entry
        # The reply is kept all the same; only the delivery claim is refused.
        entry["delivery_error"] = error_json(exc)
        event = append([], None if key is None else f"{key}:undelivered")
    entry["ref"] = event.ref
    entry["thread"] = thread
    return entry
