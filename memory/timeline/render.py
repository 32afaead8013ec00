"""How the active context reads as prompt text (R23): frames, observations (fenced, so a
model tells them from the memory's own lines), open requests and pending actions, one
function per item. `memory.timeline.compile` assembles them into the model input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from memory.kinds import REQUEST_OPEN
from memory.shapes import Observation

_NEEDS_QUOTES = re.compile(r'[ ()\[\]{}";\n\t\r\v\f\x1c-\x1e\x85\u2028\u2029]')
# json.dumps escapes the control characters but keeps these line breaks as they are.
_LINE_BREAKS_ESCAPED = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def quoted(text: str) -> str:
    """`text` as one quoted JSON string on one line, whatever line breaks it holds."""
    return json.dumps(text, ensure_ascii=False).translate(_LINE_BREAKS_ESCAPED)


def render_value(value: Any, *, in_list: bool = False) -> str:
    """Body values rendered the way the model writes them in transactions: a map as its
    fields, in braces inside a list or when empty (`{}`, `[{(k v)}]`), as the parser reads
    them back."""
    if isinstance(value, str):
        # One regex scan (a generator over the characters cost a quarter of compile).
        if not value or _NEEDS_QUOTES.search(value):
            return quoted(value)
        return value
    if isinstance(value, dict):
        fields = " ".join(
            f"({render_value(key)} {render_value(item)})" for key, item in value.items()
        )
        return "{" + fields + "}" if in_list or not value else fields
    if isinstance(value, list):
        return "[" + " ".join(render_value(item, in_list=True) for item in value) + "]"
    return str(value)


def render_frame_header(item: Mapping[str, Any]) -> str:
    """A frame's first prompt line: id, revision, status, window and sources."""
    header = f"[frame {item['id']} r{item['revision']} {item['status']}"
    if item["protected"]:
        header += " protected"
    retire = item.get("retire")
    if retire:
        header += f" due-tick {retire['due_tick']} ticks-left {retire['ticks_left']}"
        if retire["reason"]:
            header += f" reason {quoted(retire['reason'])}"
    header += "]"
    if item["sources"]:
        header += f" (from {' '.join(item['sources'])})"
    dropped = item.get("dropped")
    if dropped:
        # Until the next revise: a revise that drops fields is committed, never silently.
        fields = ", ".join(render_value(f) for f in dropped["fields"])
        header += f" · fields dropped at version {dropped['version']}: {fields}"
    return header


def render_body(body: Any) -> str:
    """A frame body's prompt lines, each after a line break (nothing unless a map)."""
    if not isinstance(body, dict):
        return ""
    # A key is quoted by the rule of a value: `("two words" x)`, as a model must write it.
    return "".join(
        f"\n  ({render_value(key)} {render_value(value)})" for key, value in body.items()
    )


def render_frame(item: Mapping[str, Any]) -> str:
    """A frame as prompt text: its header line, then one line per body field."""
    return render_frame_header(item) + render_body(item["body"])


FENCE = "|"


def fence(content: str) -> str:
    """An observation's text fenced (R58): every line, at every break a model may read as
    one (str.splitlines: \\r, \\u2028 and the rest), starts with `| `. No other line of the
    compiled input starts with `|`, so nothing inside can read as the state line, a frame,
    a relation, another observation or an open request."""
    lines = content.splitlines() or [""]
    return "\n".join(f"{FENCE} {line}" if line else FENCE for line in lines)


def render_observation(item: Observation) -> str:
    """An observation as prompt text: a header `[ref kind thread=… flags]` (open request,
    delivered actions, a preview's size in characters), then its content, fenced."""
    flag = " OPEN REQUEST" if item.get("request") == REQUEST_OPEN else ""
    if item.get("delivers"):
        flag += f" delivers {' '.join(item['delivers'])}"
    if item.get("preview"):
        flag += f" preview of {item['preview']['size']:,} chars"
    return f"[{item['ref']} {item['kind']} thread={item['thread']}{flag}]\n{fence(item['content'])}"


def render_open_request(request: Mapping[str, Any]) -> str:
    """One open request on the state line: its thread and the last message the agent sent
    on that thread (R57: threads a model can use)."""
    line = f"  {request['ref']} thread={request['thread']}"
    last = request.get("last_agent_message")
    if last is None:
        return line + " · you have sent nothing on this thread"
    return line + f" · you last sent {last['ref']}: {quoted(last['preview'])}"


def render_pending_action(action: Mapping[str, Any]) -> str:
    """A pending action on the state line; a stale one says so, and how to let it go."""
    text = f"{action['ref']} {action['name']}"
    if action["stale"]:
        text += f" (STALE: no result for {action['ticks']} ticks; cancel_action if it never will)"
    return text
