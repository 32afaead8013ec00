"""A refused MCP tool argument answers the API's `code: message details: [...]`, with the
code REST gives that field (`CODE_BY_FIELD` in memory/errors.py: `limit` is
`invalid_limit`, `q` `invalid_query`; `invalid_request` for an unknown argument or one with
no code of its own) and a message naming the argument and what it takes, never pydantic's
report. Every tool and argument is read from the server's own tool list."""

from __future__ import annotations

from collections import Counter
from typing import Any

from memory.errors import CODE_BY_FIELD, field_code
from tests.agents.mcp_arguments import (
    NO_CONTEXT,
    arguments,
    each_argument,
    kind_of,
    text_of,
    with_server,
)

WRONG: dict[str, Any] = {"integer": "5", "string": 123, "boolean": "true", "array": "x"}


def _refusal(tool: str, result: Any, code: str, name: str) -> str:
    """The refusal's message, checked: the code, the argument, no pydantic words."""
    text = text_of(result)
    assert result.is_error and NO_CONTEXT not in text, (tool, name, text)
    prefix = f"Error executing tool {tool}: {code}: "
    assert text.startswith(prefix), f"{name}: wanted {code}: {text}"
    message, _, details = text.removeprefix(prefix).partition(" details: ")
    assert name in message and details, text
    for pydantic_words in ("pydantic", "validation error", "Input should", "type="):
        assert pydantic_words not in text, text
    return message


def test_a_refused_argument_answers_its_rest_code() -> None:
    checked: Counter[str] = Counter()

    async def check(client: Any, tools: list[Any]) -> None:
        for tool, name, prop in each_argument(tools):
            code = field_code(name).value
            kind = kind_of(prop)
            if kind in WRONG:
                result = await client.call_tool(tool.name, arguments(tool, **{name: WRONG[kind]}))
                message = _refusal(tool.name, result, code, name)
                assert f"{name} takes " in message, message
                checked[code] += 1
            option = next(o for o in prop.get("anyOf", [prop]) if o.get("type") != "null")
            if "minimum" in option:  # out of bounds: the message gives them
                low = option["minimum"] - 1
                result = await client.call_tool(tool.name, arguments(tool, **{name: low}))
                message = _refusal(tool.name, result, code, name)
                assert f"from {option['minimum']} to {option['maximum']}" in message, message
            if name in tool.input_schema.get("required", []):
                given = arguments(tool)
                del given[name]
                result = await client.call_tool(tool.name, given)
                assert "is required" in _refusal(tool.name, result, code, name)

    with_server(check)
    assert checked["invalid_limit"] >= 3 and checked["invalid_query"] >= 1, checked
    assert checked["invalid_flag"] >= 3 and checked["invalid_request"] >= 10, checked


def test_an_unknown_argument_answers_invalid_request() -> None:
    async def check(client: Any, tools: list[Any]) -> None:
        for tool in tools:
            result = await client.call_tool(tool.name, arguments(tool, not_an_argument=1))
            message = _refusal(tool.name, result, "invalid_request", "not_an_argument")
            for name in tool.input_schema.get("properties", {}):  # what it does take
                assert name in message, message

    with_server(check)


def test_several_refused_arguments_answer_invalid_request_naming_each() -> None:
    async def check(client: Any, tools: list[Any]) -> None:
        (search,) = [tool for tool in tools if tool.name == "search"]
        result = await client.call_tool("search", arguments(search, q=123, limit="5"))
        text = text_of(result)
        assert text.startswith("Error executing tool search: invalid_request: "), text
        assert '"field": "q"' in text and '"field": "limit"' in text, text

    with_server(check)


def test_the_server_codes_are_the_rest_codes() -> None:
    from morphz_client.mcp_arguments import CODE_BY_FIELD as MCP_CODES

    assert {field: code.value for field, code in CODE_BY_FIELD.items()} == MCP_CODES
