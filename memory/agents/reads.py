"""Memory reads a model asks for in a reply (`recall`, `search`, `read_event`, `frame`).

Each runs now; its result enters as a `recall_result` observation (R30) that the model reads
in its next input. A `read_event` chunk never exceeds one observation's budget (R47), so it
is never previewed again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memory.errors import ErrorCode, InvalidRequest
from memory.models import Context, Event
from memory.shapes import frame_json
from memory.shapes.pages import FrameRead
from memory.shapes.recall import ReadResult
from memory.timeline.events import append_recall_result
from memory.tokens import ITEM_OVERHEAD, fit_prefix

if TYPE_CHECKING:
    from memory.shapes.recall import SearchJson


READ_TOOLS = ("recall", "search", "read_event", "frame")
READ_NOTE_TOKENS = 40


def run_read(
    context: Context,
    name: str,
    args: dict[str, Any],
    thread: str,
    idempotency_key: str | None = None,
) -> ReadResult:
    """Run one memory read (`recall`, `search`, `read_event` or `frame`); its result enters
    as a recall_result observation (R30, appended under the context row lock), once per
    `idempotency_key` (a retried reply gets the first read's event and result back). Returns
    `{ref, result}`; InvalidRequest `invalid_arguments` for an argument the read does not
    take, NotFound for an unknown frame, and whatever the read itself raises."""
    if idempotency_key is not None:
        # The first result stands: read again, it could differ (not least because a search
        # would now find the first result's own event).
        earlier = Event.objects.filter(context=context, idempotency_key=idempotency_key).first()
        if earlier is not None:
            return {"ref": earlier.ref, "result": earlier.payload}
    if name == "recall":
        return _recall(context, args, thread, idempotency_key)
    if name == "search":
        return _search(context, args, thread, idempotency_key)
    if name == "read_event":
        return _read_event(context, args, thread, idempotency_key)
    return _frame(context, args, thread, idempotency_key)


def _recall(context: Context, args: dict[str, Any], thread: str, key: str | None) -> ReadResult:
    from memory.recall.graph import recall

    allowed = ("frame_id", "depth", "direction", "include_bodies", "include_events", "max_nodes")
    _only(args, allowed)
    params = {k: args[k] for k in allowed if k in args}
    params.setdefault("max_nodes", 16)
    result = recall(context, as_observation=True, thread=thread, idempotency_key=key, **params)
    observation = result.get("observation")
    assert observation is not None  # appended: as_observation
    return {"ref": observation["ref"], "result": result}


def _search(context: Context, args: dict[str, Any], thread: str, key: str | None) -> ReadResult:
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
    return _observe(context, thread, _render_search(result), result, key)


def _frame(context: Context, args: dict[str, Any], thread: str, key: str | None) -> ReadResult:
    from memory.errors import NotFound
    from memory.read.history import frame_write_history
    from memory.read.lists import get_frame
    from memory.vocabulary import is_frame_id

    _only(args, ("id",))
    frame_id = args.get("id")
    frame = get_frame(context, str(frame_id)) if is_frame_id(frame_id) else None
    if frame is None:
        raise NotFound(f"frame {frame_id!r} does not exist in this context")
    data: FrameRead = {
        **frame_json(frame, context.tick),
        "write_history": frame_write_history(context, frame.frame_id),
    }
    return _observe(context, thread, _render_frame(data), data, key)


def _only(args: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise InvalidRequest(
            f"unknown arguments: {', '.join(unknown)}; allowed: {', '.join(allowed)}",
            code=ErrorCode.INVALID_ARGUMENTS,
        )


def _observe(
    context: Context, thread: str, content: str, payload: Any, key: str | None
) -> ReadResult:
    event = append_recall_result(
        context.pk, content=content, payload=payload, thread=thread, idempotency_key=key
    )
    return {"ref": event.ref, "result": payload}


def _read_event(context: Context, args: dict[str, Any], thread: str, key: str | None) -> ReadResult:
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
    observed = _observe(context, thread, header + "\n" + content, payload, key)
    observed["result"] = {**payload, "content": content}
    return observed


def _render_search(result: SearchJson) -> str:
    lines = [f"[search {result['query']['q']!r}: {len(result['hits'])} hits]"]
    for hit in result["hits"]:
        what = f"frame {hit['id']}" if hit["type"] == "frame" else f"event {hit['ref']}"
        lines.append(f"- {what} {hit['status']}: {hit['snippet']}")
    if result.get("lag"):
        lines.append(f"(index lag: {json.dumps(result['lag'])})")
    return "\n".join(lines)


def _render_frame(data: FrameRead) -> str:
    from memory.timeline.compile import render_frame

    item = {**data, "retire": data.get("retire")}
    lines = [render_frame(item), "write history:"]
    for entry in data["write_history"]:
        lines.append(
            f"- r{entry['revision']} {entry['op']} at version {entry['version']} "
            f"(base {entry['base_version']}, {entry['event_ref']})"
        )
    return "\n".join(lines)
