"""Compiling the active context: the next model input, as JSON and as prompt text (R23).

Sections: state (tick, version, pressure, open requests, pending actions), active and
retiring frames, the live relations between them, active observations.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.db.models.functions import Right, Substr

from memory.kinds import ACTION, REQUEST_OPEN, RETIRED, USER_MESSAGE
from memory.limits import EVENT_PREVIEW_CHARS
from memory.models import Context, Event, Frame, Relation
from memory.pressure import pressure_state
from memory.shapes import Observation, observation_json
from memory.tokens import (
    ITEM_OVERHEAD,
    estimate_tokens,
    fit_prefix,
    fit_suffix,
)
from memory.tx.retirement import window_view
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
) -> tuple[str, dict[str, Any] | None]:
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


_NEEDS_QUOTES = re.compile(r'[ ()\[\]{}";\n\t]')


def render_value(value: Any) -> str:
    """Body values rendered the way the model writes them in transactions."""
    if isinstance(value, str):
        # One regex scan (a generator over the characters cost a quarter of compile).
        if not value or _NEEDS_QUOTES.search(value):
            return json.dumps(value, ensure_ascii=False)
        return value
    if isinstance(value, dict):
        return " ".join(f"({key} {render_value(item)})" for key, item in value.items())
    if isinstance(value, list):
        return "[" + " ".join(render_value(item) for item in value) + "]"
    return str(value)


def render_frame(item: dict[str, Any]) -> str:
    header = f"[frame {item['id']} r{item['revision']} {item['status']}"
    if item["protected"]:
        header += " protected"
    retire = item.get("retire")
    if retire:
        header += f" due-tick {retire['due_tick']} ticks-left {retire['ticks_left']}"
        if retire["reason"]:
            header += f" reason {json.dumps(retire['reason'], ensure_ascii=False)}"
    header += "]"
    if item["sources"]:
        header += f" (from {' '.join(item['sources'])})"
    body = item["body"]
    lines = [header]
    if isinstance(body, dict):
        lines.extend(f"  ({key} {render_value(value)})" for key, value in body.items())
    return "\n".join(lines)


def render_observation(item: Observation) -> str:
    flag = " OPEN REQUEST" if item.get("request") == REQUEST_OPEN else ""
    if item.get("delivers"):
        flag += f" delivers {' '.join(item['delivers'])}"
    if item.get("preview"):
        flag += f" preview of {item['preview']['size']:,} chars"
    return f"[{item['ref']} {item['kind']} thread={item['thread']}{flag}]\n{item['content']}"


def compile_active_context(context: Context) -> dict[str, Any]:
    """Build the model input from persistent records. Reads only live rows through partial
    indexes, so its cost follows the active context, not the length of history.

    Returns `{context: {state, frames, relations, observations}, text, tokens}`: the
    structured input, the same rendered as prompt text, and its token estimate."""
    frame_items = _frame_items(context)
    observation_items, open_requests = _observation_items(context)
    relations = _live_relations(context)
    actions = _pending_actions(context)
    state = pressure_state(context)
    state_text = (
        f"# context {context.slug} · tick {context.tick} · version {context.version} · "
        f"pressure {state.level} ({state.used_tokens}/{state.capacity_tokens} tokens)"
    )
    if open_requests:
        state_text += "\nopen requests: " + ", ".join(r["ref"] for r in open_requests)
    if actions:
        state_text += "\npending actions: " + ", ".join(f"{a['ref']} {a['name']}" for a in actions)
    relations_text = "\n".join(f"{r['subject']} {r['name']} {r['object']}" for r in relations)
    parts = [state_text, "## frames"]
    parts.extend(render_frame(item) for item in frame_items)
    if relations:
        parts += ["## relations", relations_text]
    parts.append("## observations")
    parts.extend(render_observation(item) for item in observation_items)
    summary_tokens = estimate_tokens(state_text)
    summary: dict[str, Any] = {
        "context": context.slug,
        "tick": context.tick,
        "version": context.version,
        "pressure": state.as_dict(),
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


def _frame_items(context: Context) -> list[dict[str, Any]]:
    """Active and retiring frames, oldest first; retiring ones carry their window."""
    rows = (
        Frame.objects.filter(context=context)
        .exclude(status=RETIRED)
        .order_by("created_version", "frame_id")
        .values(
            "frame_id",
            "revision",
            "status",
            "protected",
            "body",
            "sources",
            "token_estimate",
            "retire_due_tick",
            "retire_requested_tick",
            "retire_reason",
        )
    )
    items: list[dict[str, Any]] = []
    for row in rows:
        item: dict[str, Any] = {
            "id": row["frame_id"],
            "revision": row["revision"],
            "status": row["status"],
            "protected": row["protected"],
            "body": row["body"],
            "sources": row["sources"],
            "tokens": row["token_estimate"],
        }
        retire = window_view(
            row["status"],
            row["retire_requested_tick"],
            row["retire_due_tick"],
            row["retire_reason"],
            context.tick,
        )
        if retire is not None:
            item["retire"] = retire
        items.append(item)
    return items


def _observation_items(context: Context) -> tuple[list[Observation], list[dict[str, Any]]]:
    """Active observations, each within the per-item budget (R47), and the open requests."""
    # Only as much text as a preview can show leaves the database: a 4 MB log costs its
    # head and tail, never its whole content (R47).
    budget = context.observation_budget_tokens
    head_chars = budget * 4 + 8
    events = (
        Event.objects.filter(context=context, active=True)
        .order_by("seq")
        .annotate(head=Substr("content", 1, head_chars), tail=Right("content", budget * 4))
        .values(
            "seq",
            "kind",
            "thread",
            "head",
            "tail",
            "size_chars",
            "token_estimate",
            "request_state",
            "delivers",
        )
    )
    items: list[Observation] = []
    open_requests: list[dict[str, Any]] = []
    for event in events:
        ref = event_ref(event["seq"])
        content, preview = bounded_content(
            ref, event["head"], event["tail"], event["size_chars"], budget
        )
        user_message = event["kind"] == USER_MESSAGE
        items.append(observation_json(event, content, preview, user_message))
        if user_message and event["request_state"] == REQUEST_OPEN:
            open_requests.append(
                {"ref": ref, "thread": event["thread"], "preview": _preview(event["head"])}
            )
    return items, open_requests


def _live_relations(context: Context) -> list[dict[str, Any]]:
    """Live relations whose two frames are both in the input."""
    return [
        {"subject": subject, "name": name, "object": obj}
        for subject, name, obj in Relation.objects.filter(
            context=context, removed_version__isnull=True
        )
        .exclude(subject__status=RETIRED)
        .exclude(object__status=RETIRED)
        .order_by("id")
        .values_list("subject__frame_id", "name", "object__frame_id")
    ]


def _pending_actions(context: Context) -> list[dict[str, Any]]:
    """Registered external actions still waiting for their result."""
    rows = (
        Event.objects.filter(context=context, request_state=REQUEST_OPEN, kind=ACTION)
        .order_by("seq")
        .values("seq", "thread", "payload")
    )
    return [
        {
            "ref": event_ref(a["seq"]),
            "thread": a["thread"],
            "name": (a["payload"] or {}).get("name"),
        }
        for a in rows
    ]
