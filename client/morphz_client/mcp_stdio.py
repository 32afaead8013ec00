"""The MCP server over stdio, answering a line it cannot read.

The SDK's stdio transport passes a line that is not a JSON-RPC message (truncated, not
JSON, a lone surrogate) to the server as an exception, which the server drops: the client
then waits for ever for an answer to the request it sent. Here such a line is answered as
JSON-RPC 2.0 says and as /mcp/ over HTTP does: error -32700 with `"id": null`, and one line
on stderr; the next lines are read as before."""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError

__all__ = ["PARSE_ERROR", "ParseErrorsAnswered", "serve_stdio"]

PARSE_ERROR = -32700  # JSON-RPC 2.0: invalid JSON was received
MESSAGE_CHARS = 300  # of the reader's own report, in the answer and the log line

log = logging.getLogger("morphz_client.mcp_stdio")


class ParseErrorsAnswered:
    """A read stream of the server's incoming messages (the SDK's `ReadStream`) that
    answers each unreadable line on `write` (-32700, id null) instead of passing it on."""

    def __init__(self, read: Any, write: Any) -> None:
        self.read = read
        self.write = write

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, as the wrapped stream gives it."""
        return getattr(self.read, "last_context", None)

    async def receive(self) -> SessionMessage:
        """The next readable message; an unreadable line in between is answered."""
        while True:
            item = await self.read.receive()
            if not isinstance(item, Exception):
                return item
            report = " ".join(str(item).split())[:MESSAGE_CHARS]
            log.warning("a line that is no JSON-RPC message was answered -32700: %s", report)
            error = ErrorData(code=PARSE_ERROR, message=f"Parse error: {report}")
            await self.write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error)))

    async def aclose(self) -> None:
        """Close the wrapped stream."""
        await self.read.aclose()

    def __aiter__(self) -> ParseErrorsAnswered:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> ParseErrorsAnswered:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def serve_stdio(server: MCPServer) -> None:
    """Serve `server` over the process's stdin and stdout until stdin closes, as
    `MCPServer.run("stdio")` does, with unreadable lines answered (`ParseErrorsAnswered`).
    The SDK offers no public way to run an MCPServer on given streams (its server-side
    dispatcher takes no stream-exception observer), so this reaches its low-level server."""
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write):
        await lowlevel.run(
            ParseErrorsAnswered(read, write), write, lowlevel.create_initialization_options()
        )
