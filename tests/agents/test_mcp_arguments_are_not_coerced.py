"""An MCP tool takes its arguments as sent, as the REST API takes fields (docs/rest.md:
text and numbers are not coerced): `true`, "5" and 5.0 are refused for an integer, 123 for
text, "true" and 1 for a flag, text for a list. Every tool and argument is read from the
server's own tool list."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.agents.mcp_arguments import (
    NO_CONTEXT,
    arguments,
    each_argument,
    kind_of,
    text_of,
    valid,
    with_server,
)

WRONG: dict[str, tuple[Any, ...]] = {
    "integer": (True, False, "5", 5.0),
    "string": (123, True),
    "boolean": ("true", 1, 0),
    "array": ('["x"]', "x"),
}


def test_each_argument_refuses_a_value_of_another_type() -> None:
    checked: Counter[str] = Counter()

    async def check(client: Any, tools: list[Any]) -> None:
        for tool, name, prop in each_argument(tools):
            kind = kind_of(prop)
            if kind not in WRONG:
                continue
            taken = await client.call_tool(tool.name, arguments(tool, **{name: valid(prop)}))
            assert NO_CONTEXT in text_of(taken), (tool.name, name, text_of(taken))
            for wrong in WRONG[kind]:
                result = await client.call_tool(tool.name, arguments(tool, **{name: wrong}))
                text = text_of(result)
                assert result.is_error, (tool.name, name, wrong)
                assert NO_CONTEXT not in text, f"{tool.name} took {name}={wrong!r}: {text}"
                assert name in text, text
            checked[kind] += 1

    with_server(check)
    # search's and frames' limit, recall's depth, read_event's offset; q, tx, ...
    assert checked["integer"] >= 6 and checked["string"] >= 10, checked
    assert checked["boolean"] >= 3 and checked["array"] >= 5, checked


def test_an_unknown_argument_is_refused() -> None:
    async def check(client: Any, tools: list[Any]) -> None:
        for tool in tools:
            result = await client.call_tool(tool.name, arguments(tool, not_an_argument=1))
            text = text_of(result)
            assert result.is_error and NO_CONTEXT not in text, (tool.name, text)
            assert "not_an_argument" in text, text
            assert tool.input_schema.get("additionalProperties") is False, tool.name

    with_server(check)
