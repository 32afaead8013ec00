"""Taking a model reply apart (R46).

A model's reply may hold, side by side: a `context_tx` tool call or a `(context-tx …)` form
in its text (bare or in a code fence), memory reads (`recall`, `search`, `read_event`,
`frame`), ordinary tool calls that act on the world, and text for the user. Each part takes
its own path:

- transactions commit through the engine (`memory.engine.submit_transaction`), in order; a
  rejected one stops the ones after it (they are reported as skipped);
- memory reads run now and their results enter as `recall_result` observations (R30) that the
  model reads in its next input (a `read_event` chunk never exceeds one observation's budget);
- every other tool call is registered through the action gate (`register_action`, refused in
  maintenance) and the caller runs it; its result comes back as a `tool_result` naming the
  action in `delivers`;
- the text (without its transaction forms) is recorded as an `agent_message`, with
  `delivers` for the requests it answers (`(delivers @e17)` in the text, or given).

Each part is its own database transaction: an external action never shares the commit of a
memory change (R12). `feedback` renders what the model should read next, compactly.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memory.errors import Conflict, InvalidRequest, MorphzError
from memory.kinds import AGENT_MESSAGE
from memory.models import Context
from memory.timeline.events import append_event, append_recall_result, check_thread, register_action
from memory.tokens import ITEM_OVERHEAD, fit_prefix
from memory.tx.engine import SYSTEM, Author, submit_transaction

TX_TOOL = "context_tx"
READ_TOOLS = ("recall", "search", "read_event", "frame")
MAX_TOOL_CALLS = 64
MAX_TEXT_CHARS = 1_000_000
READ_NOTE_TOKENS = 40

_FENCE_RE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(\s*)```")
_DELIVERS_RE = re.compile(r"\(\s*delivers((?:\s+@e[1-9][0-9]{0,17})+)\s*\)")
_FORM_START = "(context-tx"


# -- input ------------------------------------------------------------------------------


def _check_reply(reply: Any) -> tuple[str, list[dict[str, Any]], list[str]]:
    if not isinstance(reply, dict):
        raise InvalidRequest("the reply must be an object with `text` and/or `tool_calls`")
    text = reply.get("text") or ""
    if not isinstance(text, str):
        raise InvalidRequest("text must be a string", details=[{"field": "text"}])
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidRequest(f"text is longer than {MAX_TEXT_CHARS} characters", code="too_large")
    calls = reply.get("tool_calls") or []
    if not isinstance(calls, list) or len(calls) > MAX_TOOL_CALLS:
        raise InvalidRequest(
            f"tool_calls must be a list of at most {MAX_TOOL_CALLS} calls",
            details=[{"field": "tool_calls"}],
        )
    checked = []
    for index, call in enumerate(calls):
        if not isinstance(call, dict):
            raise InvalidRequest(
                f"tool call {index} must be an object", details=[{"tool_call": index}]
            )
        name = call.get("name")
        if not isinstance(name, str) or not 0 < len(name) <= 200:
            raise InvalidRequest(
                f"tool call {index} needs a `name` of 1-200 characters",
                details=[{"tool_call": index}],
            )
        call_id = call.get("id")
        if call_id is not None and (not isinstance(call_id, str) or len(call_id) > 200):
            raise InvalidRequest(
                f"tool call {index}: `id` must be a string of at most 200 characters",
                details=[{"tool_call": index}],
            )
        checked.append({"id": call_id, "name": name, "arguments": call.get("arguments")})
    delivers = reply.get("delivers") or []
    if not isinstance(delivers, list) or not all(isinstance(r, str) for r in delivers):
        raise InvalidRequest(
            "delivers must be a list of event refs", details=[{"field": "delivers"}]
        )
    return text, checked, delivers


def _arguments(raw: Any) -> dict[str, Any]:
    """Tool arguments as an object: OpenAI sends a JSON string, Anthropic an object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise InvalidRequest(
                "the tool call's arguments are not valid JSON", code="invalid_arguments"
            ) from None
    if not isinstance(raw, dict):
        raise InvalidRequest(
            "the tool call's arguments must be an object", code="invalid_arguments"
        )
    return raw


def extract_forms(text: str) -> tuple[list[str], str]:
    """The `(context-tx …)` forms written in `text` (bare or fenced), and the text without
    them (emptied code fences removed too). An unbalanced form runs to the end of the text,
    so the parser reports what is missing."""
    forms: list[str] = []
    rest: list[str] = []
    position = 0
    while True:
        start = text.find(_FORM_START, position)
        if start < 0:
            rest.append(text[position:])
            break
        rest.append(text[position:start])
        end = _form_end(text, start)
        forms.append(text[start:end])
        position = end
    remaining = _FENCE_RE.sub("", "".join(rest))
    return forms, remaining.strip()


def _form_end(text: str, start: int) -> int:
    depth = 0
    index = start
    in_string = False
    while index < len(text):
        ch = text[index]
        if in_string:
            if ch == "\\":
                index += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == ";":
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(text)


def _error(exc: MorphzError) -> dict[str, Any]:
    return {"code": exc.code, "message": exc.message, "details": exc.details}


# -- the parts --------------------------------------------------------------------------


def _commit_all(
    context_id: int,
    sources: list[tuple[str, str | None, Any]],
    *,
    author: Author,
    thread: str,
    evaluation_id: int | None,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    failed = False
    for source, call_id, tx_text in sources:
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
            result = submit_transaction(
                context_id,
                text=tx_text,
                author=author,
                thread=thread,
                evaluation_id=evaluation_id,
            )
        except MorphzError as exc:
            failed = True
            entry.update(status="rejected", error=_error(exc))
        else:
            entry.update(
                status="committed",
                ref=result.event_ref,
                transaction=result.record_id,
                receipt=result.receipt,
            )
        out.append(entry)
    return out


def _read(context: Context, name: str, args: dict[str, Any], thread: str) -> dict[str, Any]:
    """Run one memory read; its result enters as a recall_result observation (R30)."""
    if name == "recall":
        from memory.recall.graph import recall

        allowed = (
            "frame_id",
            "depth",
            "direction",
            "include_bodies",
            "include_events",
            "max_nodes",
        )
        _only(args, allowed)
        params = {k: args[k] for k in allowed if k in args}
        params.setdefault("max_nodes", 16)
        result = recall(context, as_observation=True, thread=thread, **params)
        return {"ref": result["observation"]["ref"], "result": result}
    if name == "search":
        from memory.search.query import search

        _only(args, ("q", "type", "status", "kind", "limit"))
        result = search(
            context,
            str(args.get("q") or ""),
            type=args.get("type"),
            status=args.get("status"),
            kind=args.get("kind"),
            limit=args.get("limit", 10),
        )
        return _observe(context, thread, _render_search(result), result)
    if name == "read_event":
        return _read_event(context, args, thread)
    # frame
    from memory.read.history import frame_write_history
    from memory.read.lists import frame_view, get_frame
    from memory.tx.lang import is_frame_id

    _only(args, ("id",))
    frame_id = args.get("id")
    frame = get_frame(context, str(frame_id)) if is_frame_id(frame_id) else None
    if frame is None:
        from memory.errors import NotFound

        raise NotFound(f"frame {frame_id!r} does not exist in this context")
    data = frame_view(frame, context.tick)
    data["write_history"] = frame_write_history(context, frame.frame_id)
    return _observe(context, thread, _render_frame(data), data)


def _only(args: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise InvalidRequest(
            f"unknown arguments: {', '.join(unknown)}; allowed: {', '.join(allowed)}",
            code="invalid_arguments",
        )


def _observe(context: Context, thread: str, content: str, payload: Any) -> dict[str, Any]:
    event = append_recall_result(context.pk, content=content, payload=payload, thread=thread)
    return {"ref": event.ref, "result": payload}


def _read_event(context: Context, args: dict[str, Any], thread: str) -> dict[str, Any]:
    from memory.read.history import read_event_chunk
    from memory.timeline.compile import chunk_chars

    _only(args, ("ref", "offset", "length"))
    budget = context.observation_budget_tokens
    offset = args.get("offset", 0)
    length = args.get("length") or chunk_chars(budget)
    chunk = read_event_chunk(context, args.get("ref"), offset, length)  # type: ignore[arg-type]
    # One observation's budget at most, or the chunk would itself enter as a preview.
    room = budget - ITEM_OVERHEAD - READ_NOTE_TOKENS
    keep = fit_prefix(chunk["content"], room)
    content = chunk["content"][:keep]
    start = chunk["offset"]
    end = min(start, chunk["size"]) + keep
    next_offset = end if end < chunk["size"] else None
    header = (
        f"[read_event {chunk['ref']} ({chunk['kind']}, {chunk['status']}): characters "
        f"{start:,}-{end:,} of {chunk['size']:,}; "
        + (f"next_offset {next_offset}]" if next_offset is not None else "end of event]")
    )
    payload = {
        "ref": chunk["ref"],
        "offset": start,
        "length": keep,
        "size": chunk["size"],
        "next_offset": next_offset,
    }
    observed = _observe(context, thread, header + "\n" + content, payload)
    observed["result"] = {**payload, "content": content}
    return observed


def _render_search(result: dict[str, Any]) -> str:
    lines = [f"[search {result['query']['q']!r}: {len(result['hits'])} hits]"]
    for hit in result["hits"]:
        what = f"frame {hit['id']}" if hit["type"] == "frame" else f"event {hit['ref']}"
        lines.append(f"- {what} {hit['status']}: {hit['snippet']}")
    if result.get("lag"):
        lines.append(f"(index lag: {json.dumps(result['lag'])})")
    return "\n".join(lines)


def _render_frame(data: dict[str, Any]) -> str:
    from memory.timeline.compile import render_frame

    item = {**data, "retire": data.get("retire")}
    lines = [render_frame(item), "write history:"]
    for entry in data["write_history"]:
        lines.append(
            f"- r{entry['revision']} {entry['op']} at version {entry['version']} "
            f"(base {entry['base_version']}, {entry['event_ref']})"
        )
    return "\n".join(lines)


# -- the whole reply --------------------------------------------------------------------


def take_apart_reply(
    context_id: int,
    reply: Any,
    *,
    author: Author = SYSTEM,
    thread: str | None = None,
    evaluation_id: int | None = None,
) -> dict[str, Any]:
    """Split a model reply into its parts and send each along its path (module docstring).

    `reply` is `{text, tool_calls: [{id, name, arguments}], delivers}` (arguments an object
    or a JSON string). Returns `{transactions, reads, actions, message, conflict, version,
    feedback}`; raises InvalidRequest only for a malformed reply (nothing written then).
    """
    text, calls, given_delivers = _check_reply(reply)
    thread_name = check_thread(thread)
    context = Context.objects.filter(pk=context_id).first()
    if context is None:
        from memory.errors import NotFound

        raise NotFound(f"context {context_id} does not exist")

    forms, rest = extract_forms(text)
    delivers = list(given_delivers)
    for match in _DELIVERS_RE.finditer(rest):
        delivers.extend(r for r in match.group(1).split() if r not in delivers)
    tx_sources: list[tuple[str, str | None, Any]] = [("text", None, form) for form in forms]
    reads: list[tuple[dict[str, Any], dict[str, Any]]] = []
    externals: list[dict[str, Any]] = []
    bad_calls: list[dict[str, Any]] = []
    for call in calls:
        try:
            args = _arguments(call["arguments"])
        except InvalidRequest as exc:
            bad_calls.append(
                {"tool_call_id": call["id"], "name": call["name"], "error": _error(exc)}
            )
            continue
        if call["name"] == TX_TOOL:
            tx_sources.append(("tool_call", call["id"], args.get("tx")))
        elif call["name"] in READ_TOOLS:
            reads.append((call, args))
        else:
            externals.append({**call, "arguments": args})

    # 1. Memory first: digesting may bring the context out of maintenance before the gate.
    transactions = _commit_all(
        context_id, tx_sources, author=author, thread=thread_name, evaluation_id=evaluation_id
    )
    # 2. Memory reads, after the commit so they see it.
    read_results = []
    for call, args in reads:
        entry: dict[str, Any] = {
            "tool_call_id": call["id"],
            "name": call["name"],
            "arguments": args,
        }
        try:
            context.refresh_from_db()
            entry.update(status="ok", **_read(context, call["name"], args, thread_name))
        except MorphzError as exc:
            entry.update(status="error", error=_error(exc))
        except (TypeError, ValueError) as exc:  # arguments of the wrong type for the read
            entry.update(
                status="error",
                error={"code": "invalid_arguments", "message": str(exc), "details": []},
            )
        read_results.append(entry)
    # 3. Actions through the gate, each in its own database transaction.
    actions = []
    for call in externals:
        entry = {"tool_call_id": call["id"], "name": call["name"], "arguments": call["arguments"]}
        try:
            event = register_action(
                context_id, name=call["name"], arguments=call["arguments"], thread=thread_name
            ).event
        except MorphzError as exc:
            entry.update(status="refused", error=_error(exc))
        else:
            entry.update(status="registered", ref=event.ref)
        actions.append(entry)
    for bad in bad_calls:
        actions.append({**bad, "status": "refused"})
    # 4. The reply itself.
    message = _record_message(
        context_id, rest, delivers, thread_name, transactions, read_results, actions
    )
    context.refresh_from_db()
    conflict = any(
        t["status"] == "rejected" and t["error"]["code"] == Conflict.code for t in transactions
    )
    result: dict[str, Any] = {
        "transactions": transactions,
        "reads": read_results,
        "actions": actions,
        "message": message,
        "conflict": conflict,
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
    transactions: list[dict[str, Any]],
    reads: list[dict[str, Any]],
    actions: list[dict[str, Any]],
) -> dict[str, Any] | None:
    if not text and not delivers:
        return None
    payload = {
        "transactions": [t.get("ref") for t in transactions if t.get("ref")],
        "tool_calls": [
            {"id": c["tool_call_id"], "name": c["name"], "ref": c.get("ref")}
            for c in [*reads, *actions]
        ],
    }
    content = text or "(reply delivered)"
    entry: dict[str, Any] = {"delivers": delivers}
    try:
        event = append_event(
            context_id,
            kind=AGENT_MESSAGE,
            content=content,
            payload=payload,
            thread=thread,
            delivers=delivers,
        ).event
    except MorphzError as exc:
        # The reply is kept all the same; only the delivery claim is refused.
        entry.update(delivers=[], delivery_error=_error(exc))
        event = append_event(
            context_id, kind=AGENT_MESSAGE, content=content, payload=payload, thread=thread
        ).event
    entry["ref"] = event.ref
    return entry


# -- what the model reads next ----------------------------------------------------------


def _receipt_line(entry: dict[str, Any]) -> str:
    receipt = entry["receipt"]
    pressure = receipt["pressure"]
    line = (
        f"- transaction {entry['ref']} committed: version {receipt['version']}; "
        f"released {receipt['released_tokens']} tokens; pressure {pressure['level']} "
        f"({pressure['used_tokens']}/{pressure['capacity_tokens']})"
    )
    for pending in receipt.get("pending_release") or []:
        line += f"; {pending['frame']} retiring until tick {pending['due_tick']}"
    done = receipt.get("completed_by_successor") or []
    if done:
        line += f"; retired by successor: {', '.join(str(d) for d in done)}"
    return line


def _rejection_lines(entry: dict[str, Any]) -> list[str]:
    error = entry["error"]
    if error["code"] == Conflict.code:
        return [
            f"- transaction NOT written (conflict): {error['message']}. The context below is "
            "current: write the transaction again against its version."
        ]
    ops = [d for d in error.get("details") or [] if isinstance(d, dict) and "index" in d]
    if not ops:
        where = ""
        detail = (error.get("details") or [{}])[0]
        if isinstance(detail, dict) and "line" in detail:
            where = f" at line {detail['line']}, column {detail['column']}"
        return [f"- transaction NOT written ({error['code']}{where}): {error['message']}"]
    lines = ["- transaction NOT written; fix and resubmit:"]
    for op in ops:
        lines.append(f"  op {op['index']} {op['op']}: {op['code']}: {op['message']}")
    return lines


def render_feedback(result: dict[str, Any]) -> str:
    """The outcome of a reply as a few lines for the model's next input."""
    lines = []
    for entry in result["transactions"]:
        if entry["status"] == "committed":
            lines.append(_receipt_line(entry))
        elif entry["status"] == "rejected":
            lines.extend(_rejection_lines(entry))
        else:
            lines.append("- a later transaction was skipped (an earlier one was rejected)")
    for entry in result["reads"]:
        if entry["status"] == "ok":
            lines.append(f"- {entry['name']}: result in {entry['ref']}")
        else:
            error = entry["error"]
            lines.append(f"- {entry['name']} failed: {error['code']}: {error['message']}")
    for entry in result["actions"]:
        if entry["status"] == "registered":
            lines.append(
                f"- action {entry['ref']} {entry['name']} registered; its result arrives as a "
                "new observation"
            )
        else:
            error = entry["error"]
            lines.append(f"- action {entry['name']} refused: {error['code']}: {error['message']}")
    message = result["message"]
    if message is not None:
        line = f"- reply recorded as {message['ref']}"
        if message["delivers"]:
            line += f", delivers {' '.join(message['delivers'])}"
        if message.get("delivery_error"):
            line += f"; delivery refused: {message['delivery_error']['message']}"
        lines.append(line)
    return "\n".join(lines) if lines else "- nothing to do in that reply"
