"""Compiling the active context: the next model input, as JSON and as prompt text (R23).

Sections: state (tick, version, pressure, open requests, pending actions), active and
retiring frames, the live relations between them, active observations. How each item reads
as prompt text is `memory.timeline.render`; `render_frame` and `render_observation` are
named here too for the readers that import them from here.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection

from memory.hotsql import pipeline
from memory.kinds import ACTION, REQUEST_OPEN, USER_MESSAGE
from memory.limits import EVENT_PREVIEW_CHARS
from memory.models import Context
from memory.pressure import pressure_state
from memory.shapes import Observation, observation_json, pressure_json
from memory.shapes.compiled import (
    CompiledInput,
    FrameItem,
    InputRelation,
    InputState,
    LastSent,
    OpenRequest,
    PendingAction,
)
from memory.shapes.events import Preview
from memory.shapes.frames import window_view
from memory.sql import named_rows, statements
from memory.timeline.render import (
    render_body,
    render_frame_header,
    render_open_request,
    render_pending_action,
)

# Re-exported: readers of the compiled view import these from here.
from memory.timeline.render import render_frame as render_frame
from memory.timeline.render import render_observation as render_observation
from memory.tokens import (
    ITEM_OVERHEAD,
    estimate_tokens,
    fit_prefix,
    fit_suffix,
)
from memory.vocabulary import event_ref

# Of an observation's budget, what its head and its tail may take in a preview; the rest is
# the item header and the note saying how to read what is not shown.
HEAD_SHARE, TAIL_SHARE, NOTE_TOKENS = 0.6, 0.25, 60


def chunk_chars(budget: int) -> int:
    """A chunk length (characters) to suggest for reading a large event: plain text of this
    length fits one observation's budget."""
    return max(256, (budget - NOTE_TOKENS - ITEM_OVERHEAD) * 3)


def bounded_content(
    ref: str, head: str, tail: str, size: int, budget: int
) -> tuple[str, Preview | None]:
    """The observation's text as it enters the model input (R47).

    `head` is the text's beginning (the whole text when it is short), `tail` its end and
    `size` its length in characters. A text over `budget` tokens becomes its head and its
    tail around a note giving the ref, the size and how to read the rest by chunks.
    Returns the text and, for a preview, what it shows."""
    if len(head) >= size and estimate_tokens(head) + ITEM_OVERHEAD <= budget:
        return head, None
    room = budget - ITEM_OVERHEAD - NOTE_TOKENS
    head_len = fit_prefix(head, int(room * HEAD_SHARE))
    # Cut at line ends when a line end is near, so the preview shows whole lines.
    newline = head.rfind("\n", 0, head_len)
    if newline >= head_len * 3 // 4:
        head_len = newline + 1
    tail_len = min(fit_suffix(tail, int(room * TAIL_SHARE)), max(0, size - head_len))
    newline = tail.find("\n", len(tail) - tail_len) if tail_len else -1
    if 0 <= newline < len(tail) - tail_len * 3 // 4:
        tail_len = len(tail) - newline - 1
    tail_start = size - tail_len
    length = chunk_chars(budget)
    note = (
        f"\n… [{ref}: {size:,} characters, only {head_len:,} at the start and {tail_len:,} at "
        f"the end shown; read the rest in chunks: read_event ref={ref} offset={head_len} "
        f"length={length}, then each next_offset] …\n"
    )
    text = head[:head_len] + note + (tail[len(tail) - tail_len :] if tail_len else "")
    return text, {
        "size": size,
        "shown": [[0, head_len], [tail_start, size]],
        "read": {"tool": "read_event", "ref": ref, "offset": head_len, "length": length},
    }


def _preview(text: str, limit: int = EVENT_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# Every character str.splitlines() breaks at is quoted, so no value starts a line (R58).
# Rendered bodies by their stored JSON text: a pure function of the text, so never stale.
# Most frames are unchanged from one compile to the next; bounded by a clear when full.
_RENDERED: dict[str, str] = {}
_RENDERED_MAX = 20_000


def _body(text: str) -> tuple[Any, str]:
    """A body's value (a fresh object: callers may keep or change it) and its prompt lines."""
    value = json.loads(text)
    rendered = _RENDERED.get(text)
    if rendered is None:
        rendered = render_body(value)
        if len(_RENDERED) >= _RENDERED_MAX:
            _RENDERED.clear()
        _RENDERED[text] = rendered
    return value, rendered


def compile_active_context(context: Context) -> CompiledInput:
    """Build the model input from persistent records. Reads only live rows through partial
    indexes, so its cost follows the active context, not the length of history.

    Returns `{context: {state, frames, relations, observations}, text, tokens}`: the
    structured input, the same rendered as prompt text, and its token estimate."""
    rows = _read_rows(context)
    frame_items, frame_texts = _frame_items(rows.frames, context.tick)
    observation_items, open_requests = _observation_items(
        rows.observations, context.observation_budget_tokens
    )
    relations = [
        InputRelation(subject=r["subject"], name=r["name"], object=r["object"])
        for r in rows.relations
    ]
    actions = _pending_actions(rows.actions)
    state = pressure_state(context)
    state_text = (
        f"# context {context.slug} · tick {context.tick} · version {context.version} · "
        f"pressure {state.level} ({state.used_tokens}/{state.capacity_tokens} tokens)"
    )
    if open_requests:
        last_sent = _last_sent(rows.last_sent)
        for request in open_requests:
            request["last_agent_message"] = last_sent.get(request["thread"])
        state_text += "\nopen requests:\n" + "\n".join(
            render_open_request(r) for r in open_requests
        )
    if actions:
        state_text += "\npending actions: " + ", ".join(render_pending_action(a) for a in actions)
    relations_text = "\n".join(f"{r['subject']} {r['name']} {r['object']}" for r in rows.relations)
    parts = [state_text, "## frames", *frame_texts]
    if relations:
        parts += ["## relations", relations_text]
    parts.append("## observations")
    parts.extend(render_observation(item) for item in observation_items)
    summary_tokens = estimate_tokens(state_text)
    summary: InputState = {
        "context": context.slug,
        "tick": context.tick,
        "version": context.version,
        "pressure": pressure_json(state),
        "open_requests": open_requests,
        "pending_actions": actions,
        "tokens": summary_tokens,
    }
    return {
        "context": {
            "state": summary,
            "frames": frame_items,
            "relations": relations,
            "observations": observation_items,
        },
        "text": "\n\n".join(parts) + "\n",
        "tokens": summary_tokens
        + estimate_tokens(relations_text)
        + sum(i["tokens"] for i in frame_items)
        + sum(i["tokens"] for i in observation_items),
    }


# The fields a revision dropped are read once per process. A revision changes only when an
# erasure masks it, and then so does the frame's body: the body's hash is part of the key.
_DROPPED: dict[tuple[int, int, int], tuple[int, list[str]] | None] = {}
_DROPPED_MAX = 50_000


def _dropped_fields(rows: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[int, list[str]]]:
    """The dropped fields of the frames' current revisions, from `_DROPPED` or read for the
    revisions not seen before (one query, only after a revise or an erasure)."""
    wanted = [
        (row["id"], row["revision"], hash(row["body"])) for row in rows if row["revision"] > 1
    ]
    missing = [key for key in wanted if key not in _DROPPED]
    if missing:
        if len(_DROPPED) + len(missing) > _DROPPED_MAX:
            _DROPPED.clear()
        found: dict[tuple[int, int], tuple[int, list[str]] | None] = {}
        with connection.cursor() as cursor:
            cursor.execute(
                statements("memory.timeline")["compile_dropped_fields"],
                [[k[0] for k in missing], [k[1] for k in missing]],
            )
            for row in named_rows(cursor):
                keys = row["fields"]
                found[(row["frame_pk"], row["revision"])] = (row["version"], keys) if keys else None
        _DROPPED.update({key: found.get(key[:2]) for key in missing})
    out = {}
    for key in wanted:
        dropped = _DROPPED.get(key)
        if dropped is not None:
            out[key[:2]] = dropped
    return out


LAST_SENT_CHARS = 160


class _Rows(NamedTuple):
    frames: list[dict[str, Any]]
    observations: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    last_sent: list[dict[str, Any]]


def _read_rows(context: Context) -> _Rows:
    """The rows a compile reads, in one round trip (psycopg's pipeline)."""
    # Only as much text as a preview can show leaves the database: a 4 MB log costs its
    # head and tail, never its whole content (R47).
    budget = context.observation_budget_tokens
    with ExitStack() as stack:
        cursors = [stack.enter_context(connection.cursor()) for _ in range(5)]
        stack.enter_context(pipeline())
        sql = statements("memory.timeline")
        cursors[0].execute(sql["compile_frames"], [context.pk])
        cursors[1].execute(sql["compile_observations"], [budget * 4 + 8, budget * 4, context.pk])
        cursors[2].execute(sql["compile_relations"], [context.pk])
        cursors[3].execute(sql["compile_actions"], [context.pk, REQUEST_OPEN, ACTION])
        cursors[4].execute(sql["compile_last_sent"], [LAST_SENT_CHARS + 8, context.pk, context.pk])
        return _Rows(*(named_rows(cursor) for cursor in cursors))


def _last_sent(rows: list[dict[str, Any]]) -> dict[str, LastSent]:
    """The agent's last message on each thread with an open request, by thread."""
    return {
        row["thread"]: {
            "ref": event_ref(row["seq"]),
            "preview": _preview(row["text"], LAST_SENT_CHARS),
        }
        for row in rows
    }


def _frame_items(rows: list[dict[str, Any]], tick: int) -> tuple[list[FrameItem], list[str]]:
    """Active and retiring frames, oldest first (retiring ones carry their window), and each
    rendered as prompt text."""
    items: list[FrameItem] = []
    texts: list[str] = []
    dropped_by_revision = _dropped_fields(rows)
    for row in rows:
        status, sources = row["status"], row["sources"]
        dropped = dropped_by_revision.get((row["id"], row["revision"]))
        body_value, body_text = _body(row["body"])
        item: FrameItem = {
            "id": row["frame_id"],
            "revision": row["revision"],
            "status": status,
            "protected": row["protected"],
            "body": body_value,
            "sources": json.loads(sources) if sources != "[]" else [],
            "tokens": row["token_estimate"],
        }
        retire = window_view(
            status,
            row["retire_requested_tick"],
            row["retire_due_tick"],
            row["retire_reason"],
            tick,
        )
        if retire is not None:
            item["retire"] = retire
        if dropped is not None:
            item["dropped"] = {"version": dropped[0], "fields": dropped[1]}
        items.append(item)
        texts.append(render_frame_header(item) + body_text)
    return items, texts


def _observation_items(
    rows: list[dict[str, Any]], budget: int
) -> tuple[list[Observation], list[OpenRequest]]:
    """Active observations, each within the per-item budget (R47), and the open requests."""
    items: list[Observation] = []
    open_requests: list[OpenRequest] = []
    for row in rows:
        seq, kind, thread, head = row["seq"], row["kind"], row["thread"], row["head"]
        request_state = row["request_state"]
        ref = event_ref(seq)
        content, preview = bounded_content(ref, head, row["tail"], row["size_chars"], budget)
        user_message = kind == USER_MESSAGE
        items.append(observation_json(row, content, preview, user_message))
        if user_message and request_state == REQUEST_OPEN:
            open_requests.append({"ref": ref, "thread": thread, "preview": _preview(head)})
    return items, open_requests


def _pending_actions(rows: list[dict[str, Any]]) -> list[PendingAction]:
    """Registered external actions still waiting for their result: `ticks` since each was
    registered, `stale` from settings.MORPHZ_STALE_ACTION_TICKS on."""
    stale_after = settings.MORPHZ_STALE_ACTION_TICKS
    actions: list[PendingAction] = []
    for row in rows:
        seq, thread, payload, ticks = row["seq"], row["thread"], row["payload"], row["ticks"]
        name = (json.loads(payload) or {}).get("name") if payload is not None else None
        actions.append(
            {
                "ref": event_ref(seq),
                "thread": thread,
                "name": name,
                "ticks": ticks,
                "stale": ticks >= stale_after,
            }
        )
    return actions
