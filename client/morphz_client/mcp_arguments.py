"""MCP tool arguments checked as the REST API checks its fields (R48): taken as sent (no
coercion), an unknown one refused.

How it works: docs/internals.md, section `client/morphz_client/mcp_arguments.py`."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import ConfigDict

__all__ = ["check_arguments"]


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
