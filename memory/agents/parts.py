"""A model reply read and sorted (R46): its shape checked, its tool arguments decoded, the
`(context-tx …)` forms found in its text, and every part put on its path (transactions,
memory reads, external actions, calls that failed). memory.agents.replies runs the parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memory.agents.reads import READ_TOOLS
from memory.errors import InvalidRequest, MorphzError
from memory.strictjson import loads_strict

TX_TOOL = "context_tx"
MAX_TOOL_CALLS = 64
MAX_TEXT_CHARS = 1_000_000

_FENCE_RE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(\s*)```")
_DELIVERS_RE = re.compile(r"\(\s*delivers((?:\s+@e[1-9][0-9]{0,17})+)\s*\)")
_FORM_START = "(context-tx"


def check_reply(reply: Any) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The reply's text, its tool calls `{id, name, arguments}` and the refs it says it
    delivers; InvalidRequest when the reply is not shaped as documented (docs/agents.md)."""
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
            raw = loads_strict(raw)
        except ValueError as exc:
            # DuplicateKey and NaN included: which of two values a model meant is unknowable.
            raise InvalidRequest(
                f"the tool call's arguments are not valid JSON: {exc}"[:300],
                code="invalid_arguments",
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


def error_json(exc: MorphzError) -> dict[str, Any]:
    """An error as the API's error body shows it: `{code, message, details}`."""
    return {"code": exc.code, "message": exc.message, "details": exc.details}


# -- the parts --------------------------------------------------------------------------


@dataclass
class Parts:
    """A reply sorted by path: transactions, memory reads, actions, calls that failed."""

    rest: str
    delivers: list[str]
    transactions: list[tuple[str, str | None, Any]] = field(default_factory=list)
    reads: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    externals: list[dict[str, Any]] = field(default_factory=list)
    bad_calls: list[dict[str, Any]] = field(default_factory=list)


def sort_parts(text: str, calls: list[dict[str, Any]], given_delivers: list[str]) -> Parts:
    """The reply's parts by path; the delivered refs are the given ones and those written as
    `(delivers @e17)` in the text."""
    forms, rest = extract_forms(text)
    delivers = list(given_delivers)
    for match in _DELIVERS_RE.finditer(rest):
        delivers.extend(r for r in match.group(1).split() if r not in delivers)
    parts = Parts(rest, delivers, [("text", None, form) for form in forms])
    for call in calls:
        try:
            args = _arguments(call["arguments"])
        except InvalidRequest as exc:
            parts.bad_calls.append(
                {"tool_call_id": call["id"], "name": call["name"], "error": error_json(exc)}
            )
            continue
        if call["name"] == TX_TOOL:
            parts.transactions.append(("tool_call", call["id"], args.get("tx")))
        elif call["name"] in READ_TOOLS:
            parts.reads.append((call, args))
        else:
            parts.externals.append({**call, "arguments": args})
    return parts
