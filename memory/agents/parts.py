"""A model reply read and sorted (R46): its shape checked, its tool arguments decoded, the
`(context-tx …)` forms found in its text, and every part put on its path (transactions,
memory reads, external actions, calls that failed). memory.agents.replies runs the parts.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from memory.agents.protocol import MEMORY_TOOLS
from memory.agents.reads import READ_TOOLS
from memory.errors import ErrorCode, InvalidRequest, MorphzError
from memory.limits import MAX_AGENT_TOOLS, MAX_REPLY_TEXT_CHARS, MAX_TOOL_CALLS, MAX_TOOL_NAME_CHARS
from memory.shapes.errors import ErrorJson
from memory.shapes.errors import error_json as shaped_error
from memory.shapes.replies import CallOutcome, TxSource
from memory.strictjson import loads_strict

TX_TOOL = "context_tx"
CANCEL_TOOL = "cancel_action"

_FENCE_RE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(\s*)```")
_DELIVERS_RE = re.compile(r"[ \t]*\(\s*delivers((?:\s+@e[1-9][0-9]{0,17})+)\s*\)")
# What a model writes when it means (delivers @e17): a colon, a JSON list, a ref without @.
_DELIVERS_NEAR_RE = re.compile(r"\(\s*delivers\s*(?::|\[|\s+e[0-9]|\s+\"@)")
_FORM_START = "(context-tx"


@dataclass(frozen=True)
class ToolCall:
    """A tool call of a reply: its `arguments` as given (an object or its JSON text) until
    sorted, decoded to an object after."""

    id: str | None
    name: str
    arguments: Any


def check_reply(reply: Any) -> tuple[str, list[ToolCall], list[str]]:
    """The reply's text, its tool calls and the refs it says it delivers; InvalidRequest
    when the reply is not shaped as documented (docs/agents.md)."""
    if not isinstance(reply, dict):
        raise InvalidRequest("the reply must be an object with `text` and/or `tool_calls`")
    text = reply.get("text") or ""
    if not isinstance(text, str):
        raise InvalidRequest("text must be a string", details=[{"field": "text"}])
    if len(text) > MAX_REPLY_TEXT_CHARS:
        raise InvalidRequest(
            f"text is longer than {MAX_REPLY_TEXT_CHARS} characters", code=ErrorCode.TOO_LARGE
        )
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
        if not isinstance(name, str) or not 0 < len(name) <= MAX_TOOL_NAME_CHARS:
            raise InvalidRequest(
                f"tool call {index} needs a `name` of 1-{MAX_TOOL_NAME_CHARS} characters",
                details=[{"tool_call": index}],
            )
        call_id = call.get("id")
        if call_id is not None and (
            not isinstance(call_id, str) or len(call_id) > MAX_TOOL_NAME_CHARS
        ):
            raise InvalidRequest(
                f"tool call {index}: `id` must be a string of at most "
                f"{MAX_TOOL_NAME_CHARS} characters",
                details=[{"tool_call": index}],
            )
        checked.append(ToolCall(call_id, name, call.get("arguments")))
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
                code=ErrorCode.INVALID_ARGUMENTS,
            ) from None
    if not isinstance(raw, dict):
        raise InvalidRequest(
            "the tool call's arguments must be an object", code=ErrorCode.INVALID_ARGUMENTS
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


def error_json(exc: MorphzError) -> ErrorJson:
    """An error as the API's error body shows it: `{code, message, details}`."""
    return shaped_error(exc.code, exc.message, exc.details)


# -- the parts --------------------------------------------------------------------------


@dataclass
class Parts:
    """A reply sorted by path: transactions, memory reads, cancellations, actions, calls
    that failed, and hints for near-miss syntax found in the text."""

    rest: str
    delivers: list[str]
    # (source, tool call id, the transaction's text as given)
    transactions: list[tuple[TxSource, str | None, Any]] = field(default_factory=list)
    reads: list[ToolCall] = field(default_factory=list)
    cancels: list[ToolCall] = field(default_factory=list)
    externals: list[ToolCall] = field(default_factory=list)
    bad_calls: list[CallOutcome] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)


def check_tools(tools: Any) -> list[str] | None:
    """The agent's own tool names as the reply names them (None: not named, any name is
    registered); InvalidRequest unless a list of at most MAX_AGENT_TOOLS names of 1 to
    MAX_TOOL_NAME_CHARS characters."""
    if tools is None:
        return None
    if (
        not isinstance(tools, list)
        or len(tools) > MAX_AGENT_TOOLS
        or not all(isinstance(t, str) and 0 < len(t) <= MAX_TOOL_NAME_CHARS for t in tools)
    ):
        raise InvalidRequest(
            f"tools must be a list of at most {MAX_AGENT_TOOLS} tool names of "
            f"1-{MAX_TOOL_NAME_CHARS} characters",
            details=[{"field": "tools"}],
        )
    return list(tools)


def unknown_tool(name: str, tools: list[str]) -> InvalidRequest:
    """A call to a name that is neither a memory tool nor one of the agent's (R59): refused
    `unknown_tool`, with the closest name when one is near."""
    known = [*MEMORY_TOOLS, *tools]
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return InvalidRequest(
        f"no tool named {name!r}{hint}: the tools are {', '.join(known)}; nothing was registered",
        code=ErrorCode.UNKNOWN_TOOL,
        details=[{"name": name, "tools": known}],
    )


def strip_deliveries(text: str) -> tuple[str, list[str]]:
    """The text without its `(delivers @e17)` markers (the user never sees them), and the
    refs they name, in order, each once."""
    refs: list[str] = []
    for match in _DELIVERS_RE.finditer(text):
        refs.extend(r for r in match.group(1).split() if r not in refs)
    cleaned = _DELIVERS_RE.sub("", text)
    return "\n".join(line.rstrip() for line in cleaned.split("\n")).strip(), refs


def delivery_hints(text: str) -> list[str]:
    """Hints for deliveries written in a form that delivers nothing (R59)."""
    if _DELIVERS_NEAR_RE.search(text):
        return [
            "a delivery is written (delivers @e17) in the reply text: no colon, no list, the "
            "ref with its @; the form you wrote delivered nothing"
        ]
    return []


def sort_parts(
    text: str,
    calls: list[ToolCall],
    given_delivers: list[str],
    tools: list[str] | None = None,
) -> Parts:
    """The reply's parts by path; the delivered refs are the given ones and those written as
    `(delivers @e17)` in the text (removed from it). With `tools`, a call to a name that is
    neither a memory tool nor one of them is a failed call (`unknown_tool`)."""
    forms, rest = extract_forms(text)
    hints = delivery_hints(rest)
    rest, written = strip_deliveries(rest)
    delivers = list(given_delivers)
    delivers.extend(r for r in written if r not in delivers)
    parts = Parts(rest, delivers, [("text", None, form) for form in forms], hints=hints)
    for given in calls:
        try:
            call = ToolCall(given.id, given.name, _arguments(given.arguments))
            if tools is not None and call.name not in (*MEMORY_TOOLS, *tools):
                raise unknown_tool(call.name, tools)
        except InvalidRequest as exc:
            parts.bad_calls.append(
                {
                    "tool_call_id": given.id,
                    "name": given.name,
                    "error": error_json(exc),
                    "status": "refused",
                }
            )
            continue
        if call.name == TX_TOOL:
            parts.transactions.append(("tool_call", call.id, call.arguments.get("tx")))
        elif call.name in READ_TOOLS:
            parts.reads.append(call)
        elif call.name == CANCEL_TOOL:
            parts.cancels.append(call)
        else:
            parts.externals.append(call)
    return parts
