"""Taking a model reply apart (R46).

A model's reply may hold, side by side: a `context_tx` tool call or a `(context-tx …)` form
in its text (bare or in a code fence), memory reads (`recall`, `search`, `read_event`,
`frame`), ordinary tool calls that act on the world, and text for the user. Each part takes
its own path:

- transactions commit through the engine (`memory.tx.engine.submit_transaction`), in order; a
  rejected one stops the ones after it (they are reported as skipped);
- memory reads run now and their results enter as `recall_result` observations (R30) that the
  model reads in its next input (a `read_event` chunk never exceeds one observation's budget);
- every other tool call is registered through the action gate (`register_action`, refused in
  maintenance) and the caller runs it; its result comes back as a `tool_result` naming the
  action in `delivers`;
- the text (without its transaction forms) is recorded as an `agent_message`, with
  `delivers` for the requests it answers (`(delivers @e17)` in the text, or given).

Each part is its own database transaction: an external action never shares the commit of a
memory change (R12). The reply is read and sorted by `memory.agents.parts`; `feedback`
(`memory.agents.feedback`) renders what the model should read next, compactly; the reads
are in `memory.agents.reads`. With an idempotency key, each part is written under a key of
its own derived from it (`<key>:tx:0`, `<key>:read:1`, `<key>:action:0`, `<key>:message`),
so a retried reply (a lost response, a crash half-way) writes each part at most once: parts
already written answer their first result, the rest are written now (R49).
"""

from __future__ import annotations

from typing import Any

from memory.agents.feedback import render_feedback
from memory.agents.parts import Parts, check_reply, error_json, sort_parts
from memory.agents.reads import run_read
from memory.errors import Conflict, InvalidRequest, MorphzError, NotFound
from memory.kinds import AGENT_MESSAGE
from memory.models import Context, Event, Frame
from memory.timeline.events import append_event, check_thread, register_action
from memory.tx.engine import SYSTEM, Author, check_evaluation, submit_transaction
from memory.tx.lang import TxError, parse_text

MAX_REPLY_KEY_CHARS = 180  # room for the part suffix within the 200 of an idempotency key


def _part_key(key: str | None, part: str, index: int | None = None) -> str | None:
    """The idempotency key of one part of a reply sent under `key` (None without one)."""
    if key is None:
        return None
    return f"{key}:{part}" if index is None else f"{key}:{part}:{index}"


def _commit_all(
    context_id: int,
    sources: list[tuple[str, str | None, Any]],
    *,
    author: Author,
    thread: str,
    evaluation_id: int | None,
    key: str | None,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    failed = False
    for index, (source, call_id, tx_text) in enumerate(sources):
        entry: dict[str, Any] = {"source": source, "tool_call_id": call_id}
        if failed:
            entry.update(status="skipped", error=None)
            out.append(entry)
            continue
        try:
            if not isinstance(tx_text, str) or not tx_text.strip():
                raise InvalidRequest(
                    "context_tx needs `tx`: the transaction text, starting with (context-tx",
                    details=[{"field": "tx"}],
                )
            dropped = _dropped_fields(context_id, tx_text)
            result = submit_transaction(
                context_id,
                text=tx_text,
                author=author,
                thread=thread,
                evaluation_id=evaluation_id,
                idempotency_key=_part_key(key, "tx", index),
            )
        except MorphzError as exc:
            failed = True
            entry.update(status="rejected", error=error_json(exc))
        else:
            entry.update(
                status="committed",
                ref=result.event_ref,
                transaction=result.record_id,
                receipt=result.receipt,
            )
            if dropped:
                entry["notes"] = [
                    f"revise {frame_id} dropped {', '.join(keys)} (revise replaces the whole "
                    "body; write every field you keep)"
                    for frame_id, keys in dropped.items()
                ]
        out.append(entry)
    return out


def _dropped_fields(context_id: int, tx_text: str) -> dict[str, list[str]]:
    """For each `revise` in the transaction, the fields of the current body it leaves out:
    the most common slip (a revise replaces the whole body). Advisory only."""
    try:
        ops = parse_text(tx_text)["ops"]
    except TxError:
        return {}
    revised = {op["id"]: op["body"] for op in ops if op["op"] == "revise"}
    if not revised:
        return {}
    bodies = dict(
        Frame.objects.filter(context_id=context_id, frame_id__in=list(revised)).values_list(
            "frame_id", "body"
        )
    )
    dropped = {}
    for frame_id, body in revised.items():
        old = bodies.get(frame_id)
        if isinstance(old, dict) and isinstance(body, dict):
            missing = [key for key in old if key not in body]
            if missing:
                dropped[frame_id] = missing
    return dropped


# -- the whole reply --------------------------------------------------------------------


def _run_reads(
    context: Context,
    reads: list[tuple[dict[str, Any], dict[str, Any]]],
    thread: str,
    key: str | None,
) -> list[dict[str, Any]]:
    results = []
    for index, (call, args) in enumerate(reads):
        entry: dict[str, Any] = {
            "tool_call_id": call["id"],
            "name": call["name"],
            "arguments": args,
        }
        try:
            context.refresh_from_db()
            part_key = _part_key(key, "read", index)
            entry.update(status="ok", **run_read(context, call["name"], args, thread, part_key))
        except MorphzError as exc:
            entry.update(status="error", error=error_json(exc))
        except (TypeError, ValueError) as exc:  # arguments of the wrong type for the read
            entry.update(
                status="error",
                error={"code": "invalid_arguments", "message": str(exc), "details": []},
            )
        results.append(entry)
    return results


def _register_actions(
    context_id: int, parts: Parts, thread: str, key: str | None
) -> list[dict[str, Any]]:
    """Each external call through the action gate, in its own database transaction."""
    actions = []
    for index, call in enumerate(parts.externals):
        entry = {"tool_call_id": call["id"], "name": call["name"], "arguments": call["arguments"]}
        try:
            event = register_action(
                context_id,
                name=call["name"],
                arguments=call["arguments"],
                thread=thread,
                idempotency_key=_part_key(key, "action", index),
            ).event
        except MorphzError as exc:
            entry.update(status="refused", error=error_json(exc))
        else:
            entry.update(status="registered", ref=event.ref)
        actions.append(entry)
    return actions + [{**bad, "status": "refused"} for bad in parts.bad_calls]


def _check_key(idempotency_key: Any) -> None:
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= MAX_REPLY_KEY_CHARS
    ):
        raise InvalidRequest(
            f"idempotency_key must be a string of 1-{MAX_REPLY_KEY_CHARS} characters",
            details=[{"field": "idempotency_key"}],
        )


def take_apart_reply(
    context_id: int,
    reply: Any,
    *,
    author: Author = SYSTEM,
    thread: str | None = None,
    evaluation_id: int | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Split a model reply into its parts and send each along its path (module docstring).

    `reply` is `{text, tool_calls: [{id, name, arguments}], delivers}` (arguments an object
    or a JSON string). Returns `{transactions, reads, actions, message, conflict, version,
    tick, feedback}`; raises InvalidRequest only for a malformed reply (nothing written).
    `idempotency_key` (1-180 characters): a retry writes no part twice (module docstring);
    the same key with another reply gets each changed part refused `idempotency_key_reused`.
    """
    _check_key(idempotency_key)
    text, calls, given_delivers = check_reply(reply)
    thread_name = check_thread(thread)
    context = Context.objects.filter(pk=context_id).first()
    if context is None:
        raise NotFound(f"context {context_id} does not exist")
    check_evaluation(context_id, evaluation_id)  # as transactions do: nothing written
    parts = sort_parts(text, calls, given_delivers)
    # Memory first: digesting may bring the context out of maintenance before the gate,
    # and the reads see the commit.
    transactions = _commit_all(
        context_id,
        parts.transactions,
        author=author,
        thread=thread_name,
        evaluation_id=evaluation_id,
        key=idempotency_key,
    )
    reads = _run_reads(context, parts.reads, thread_name, idempotency_key)
    actions = _register_actions(context_id, parts, thread_name, idempotency_key)
    message = _record_message(
        context_id,
        parts.rest,
        parts.delivers,
        thread_name,
        (transactions, reads, actions),
        _part_key(idempotency_key, "message"),
    )
    context.refresh_from_db()
    result: dict[str, Any] = {
        "transactions": transactions,
        "reads": reads,
        "actions": actions,
        "message": message,
        "conflict": any(
            t["status"] == "rejected" and t["error"]["code"] == Conflict.code for t in transactions
        ),
        "version": context.version,
        "tick": context.tick,
    }
    result["feedback"] = render_feedback(result)
    return result


def _record_message(
    context_id: int,
    text: str,
    delivers: list[str],
    thread: str,
    outcomes: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
    key: str | None,
) -> dict[str, Any] | None:
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
    entry: dict[str, Any] = {"delivers": delivers}

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
        if exc.code == "idempotency_key_reused":
            # Another reply under this key: the message is not written at all.
            entry.update(delivers=[], ref=None, error=error_json(exc))
            return entry
        # The reply is kept all the same; only the delivery claim is refused.
        entry.update(delivers=[], delivery_error=error_json(exc))
        event = append([], None if key is None else f"{key}:undelivered")
    entry["ref"] = event.ref
    return entry
