"""What every MCP tool shares (R48): the client serving the request being handled, and a
call through it whose Morphz errors become the tool's error (`code: message`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from morphz_client.client import MorphzClient
from morphz_client.errors import MorphzAPIError, MorphzError

__all__ = ["current_client", "request_client", "tool_call"]

# The client serving the request being handled: set per HTTP request by the mounted app,
# or once for the stdio server.
current_client: ContextVar[MorphzClient] = ContextVar("morphz_mcp_client")


def request_client() -> MorphzClient:
    """The client of the request being handled; a tool error when there is none."""
    try:
        return current_client.get()
    except LookupError:
        raise ToolError("no Morphz context for this request (missing or unknown token)") from None


def tool_call(fn: Callable[[], Any]) -> Any:
    """`fn()`, its Morphz errors raised again as the tool's error: `code: message` (and
    `details`) for an API error."""
    try:
        return fn()
    except MorphzAPIError as exc:
        details = f" details: {json.dumps(exc.details, ensure_ascii=False)}" if exc.details else ""
        raise ToolError(f"{exc.code}: {exc.message}{details}") from None
    except MorphzError as exc:
        raise ToolError(str(exc)) from None
