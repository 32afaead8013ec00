"""MCP tool arguments checked as the REST API checks its fields (R48): taken as sent (no
coercion), an unknown one refused, a refusal answered as the API's `code: message`.

How it works: docs/internals.md, section `client/morphz_client/mcp_arguments.py`."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult
from mcp_types import InputRequiredResult
from pydantic import ConfigDict, ValidationError
from pydantic_core import ErrorDetails

__all__ = [
    "CODE_BY_FIELD",
    "ArgumentCheckingServer",
    "check_arguments",
    "refusal",
    "refuse_blank",
    "unknown_tool",
]

# REST's field -> code table (`CODE_BY_FIELD` in memory/errors.py, which this package cannot
# import): an argument named like a REST field fails with that field's code, any other with
# `invalid_request`. tests/agents/test_mcp_argument_errors_carry_the_api_code.py checks the
# two tables agree.
CODE_BY_FIELD: dict[str, str] = {
    "limit": "invalid_limit",
    "status": "invalid_status",
    "depth": "invalid_depth",
    "offset": "invalid_offset",
    "length": "invalid_length",
    "kind": "invalid_kind",
    "thread": "invalid_thread",
    "type": "invalid_type",
    "since": "invalid_time",
    "until": "invalid_time",
    "q": "invalid_query",
    "frame_id": "invalid_frame_id",
    "frame": "invalid_frame_id",
    "subject": "invalid_frame_id",
    "object": "invalid_frame_id",
    "source": "invalid_frame_id",
    "direction": "invalid_direction",
    "max_nodes": "invalid_max_nodes",
    "view_version": "invalid_view_version",
    "base_version": "invalid_base_version",
    "as_of": "invalid_version",
    "at_version": "invalid_version",
    "from": "invalid_version",
    "to": "invalid_version",
    "cursor": "invalid_cursor",
    "include_bodies": "invalid_flag",
    "include_events": "invalid_flag",
    "include_removed": "invalid_flag",
    "as_observation": "invalid_flag",
    "transactions": "invalid_flag",
    "frozen": "invalid_flag",
    "continuation": "invalid_flag",
    "include_instructions": "invalid_flag",
}
INVALID_REQUEST = "invalid_request"
UNKNOWN = "extra_forbidden"


class _AsSent(FuncMetadata):
    """A tool's arguments validated as sent. The SDK first parses JSON out of a string given
    for a list or object ('["@e1"]' becomes ["@e1"]); REST takes no list as text, so
    neither does a tool."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        """The arguments as the tool's keyword arguments; ValidationError for a refused one."""
        return self.arg_model.model_validate(arguments_to_validate).model_dump_one_level()


def check_arguments(server: MCPServer) -> None:
    """Make every tool registered on `server` take its arguments as REST takes fields: no
    coercion (`true`, "5" or 5.0 is no integer, 123 no text), an argument it does not take
    refused (its input schema says `additionalProperties: false`). The SDK builds each
    tool's argument model from its signature, lax and ignoring extras, with no switch; its
    FuncMetadata reads the model live, so each gets a strict subclass."""
    for tool in server._tool_manager.list_tools():
        loose = tool.fn_metadata.arg_model
        strict: type[ArgModelBase] = type(
            loose.__name__,
            (loose,),
            {
                "__module__": loose.__module__,
                "model_config": ConfigDict(
                    extra="forbid", strict=True, arbitrary_types_allowed=True
                ),
            },
        )
        old = tool.fn_metadata
        tool.fn_metadata = _AsSent(
            arg_model=strict,
            output_schema=old.output_schema,
            output_model=old.output_model,
            wrap_output=old.wrap_output,
        )
        tool.parameters = strict.model_json_schema(by_alias=True)


class ArgumentCheckingServer(MCPServer):
    """An MCPServer whose refused tool arguments answer the API's `code: message details:
    [...]` (`refusal`) instead of pydantic's report."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """The tool's answer, as MCPServer.call_tool; a refused argument is a ToolError
        `Error executing tool <name>: <code>: <message> details: [{field, message}]`."""
        names = [tool.name for tool in await self.list_tools()]
        if name not in names:
            raise ToolError(f"Error executing tool {name}: {unknown_tool(name, names)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # The SDK raises a refused argument as a ToolError caused by the ValidationError;
            # a crash (UnexpectedToolError) keeps its generic text.
            refused = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(refused, ValidationError):
                raise
            schema = next((t.input_schema for t in await self.list_tools() if t.name == name), {})
            raise ToolError(
                f"Error executing tool {name}: {refusal(name, refused, schema)}"
            ) from refused


# The protocol's text names the tools of a model reply (morphz_protocol.TOOLS); over MCP a
# transaction is committed with `commit`, so a model following the text calls `context_tx`.
MCP_NAME_OF_REPLY_TOOL = {"context_tx": "commit"}


def unknown_tool(name: str, names: Sequence[str]) -> str:
    """`unknown_tool: ...` for a call of a tool the server does not have, naming the tool
    meant (the MCP name of a reply tool, else the nearest name) and every tool."""
    near = MCP_NAME_OF_REPLY_TOOL.get(name) or next(
        iter(difflib.get_close_matches(name, names, n=1)), None
    )
    meant = f"; did you mean {near!r}?" if near else ""
    return f"unknown_tool: no tool {name!r}{meant} The tools: {', '.join(sorted(names))}."


def refusal(tool: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """`code: message details: [{field, message}, ...]` for arguments `tool` refused, by
    REST's rules: the code is the failing argument's own (CODE_BY_FIELD), `invalid_request`
    for an unknown argument, one without a code, or several failing with different codes;
    the message is the first failure's (an unknown argument first: a typo explains the
    rest), naming the argument and what it takes."""
    errors = sorted(exc.errors(include_url=False), key=lambda error: error["type"] != UNKNOWN)
    details = [{"field": _place(e["loc"]), "message": _message(tool, e, schema)} for e in errors]
    codes = {_code(error) for error in errors}
    code = codes.pop() if len(codes) == 1 else INVALID_REQUEST
    return f"{code}: {details[0]['message']} details: {json.dumps(details, ensure_ascii=False)}"


def refuse_blank(field: str, value: str, takes: str) -> None:
    """Nothing for a `value` with text in it; for an empty or whitespace-only one, as REST
    refuses a blank field, a ToolError `invalid_request: <field> may not be blank: it takes
    <takes> details: [{field, message}]` (the form `refusal` answers)."""
    if value.strip():
        return
    message = f"{field} may not be blank: it takes {takes}"
    details = json.dumps([{"field": field, "message": message}], ensure_ascii=False)
    raise ToolError(f"{INVALID_REQUEST}: {message} details: {details}")


def _code(error: ErrorDetails) -> str:
    if error["type"] == UNKNOWN or not error["loc"]:
        return INVALID_REQUEST
    # The argument's own code, not a nested field's: create_relations' `relations[0].from`
    # is no REST `from` (a version).
    return CODE_BY_FIELD.get(str(error["loc"][0]), INVALID_REQUEST)


def _place(loc: Sequence[int | str]) -> str:
    """A place as the API names one: `relations[0].from`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(tool: str, error: ErrorDetails, schema: dict[str, Any]) -> str:
    loc, place = error["loc"], _place(error["loc"])
    if error["type"] == UNKNOWN:
        names = ", ".join(_properties(_at(schema, loc[:-1]) or {}))
        if len(loc) == 1:
            return f"{tool} takes no argument {place!r} (its arguments: {names or 'none'})"
        return f"{_place(loc[:-1])} has no field {loc[-1]!r} (its fields: {names})"
    wanted = _at(schema, loc)
    if wanted is None:  # a place the schema does not describe: pydantic's words
        return f"{place}: {error['msg']}"
    what = _what(wanted, schema.get("$defs", {}))
    if error["type"] == "missing":
        return f"{place} is required: it takes {what}"
    return f"{place} takes {what}, not {_shown(error.get('input'))}"


def _deref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return dict(defs.get(ref.rsplit("/", 1)[-1], {}))
    return node


def _properties(node: dict[str, Any]) -> list[str]:
    return list(node.get("properties", {}))


def _at(schema: dict[str, Any], loc: Sequence[int | str]) -> dict[str, Any] | None:
    """The schema of the value at `loc` (an item of a list at an int, a property at a
    name), or None where the schema says nothing."""
    defs = schema.get("$defs", {})
    node: dict[str, Any] | None = schema
    for part in loc:
        if node is None:
            return None
        options = [_deref(o, defs) for o in node.get("anyOf", [node])]
        found = [
            o.get("items") if isinstance(part, int) else o.get("properties", {}).get(part)
            for o in options
        ]
        node = next((f for f in found if isinstance(f, dict)), None)
    return None if node is None else _deref(node, defs)


def _what(node: dict[str, Any], defs: dict[str, Any]) -> str:
    """What a value of this JSON schema is, in words: "an integer from 1 to 100"."""
    node = _deref(node, defs)
    if "anyOf" in node:
        return " or ".join(_what(option, defs) for option in node["anyOf"])
    kind = node.get("type")
    if kind in ("integer", "number"):
        low, high = node.get("minimum"), node.get("maximum")
        what = "an integer" if kind == "integer" else "a number"
        if low is not None and high is not None:
            return f"{what} from {low} to {high}"
        if low is not None:
            return f"{what} of at least {low}"
        return f"{what} of at most {high}" if high is not None else what
    if kind == "string":
        return "text"
    if kind == "boolean":
        return "true or false"
    if kind == "null":
        return "null"
    if kind == "array":
        return f"a list (each item {_what(node.get('items', {}), defs)})"
    if kind == "object":
        fields = ", ".join(_properties(node))
        return f"an object with {fields}" if fields else "an object"
    return "a value"


def _shown(value: Any) -> str:
    """A refused value as the message shows it: JSON, cut short; a list or object by kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:36] + "..."
