"""MCP over streamable HTTP at /mcp/ (R48), for `morphz.asgi`.

The MCP server is `morphz_client.mcp_server` (the same tools as the stdio command). Each
request must carry a context's bearer token, exactly as on the REST API; the tools then act
through a `MorphzClient` whose HTTP goes straight into this process's Django app (no
network hop), so every REST check and error applies, and a token reaches its own context
only. Stateless streamable HTTP with JSON responses: any worker can answer any request.

The SDK's session manager needs a running task group; the server runs without ASGI
lifespan events, so it is started on the first request, on the serving event loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings

MCP_PATH = "/mcp/"


def _hosts() -> list[str]:
    hosts = [h for h in settings.ALLOWED_HOSTS if h and h != "*"]
    return [p for h in hosts for p in (h, f"{h}:*")]


class McpApp:
    """ASGI app for /mcp/: checks the bearer token, then hands over to the MCP SDK."""

    def __init__(self, django_app: Any) -> None:
        self.django_app = django_app
        self.server: Any = None
        self.app: Any = None
        self._lock: asyncio.Lock | None = None
        self._runner: asyncio.Task[None] | None = None

    def _build(self) -> None:
        """Import the SDK and build the server (a few seconds of imports: done on the first
        /mcp/ request, so serving the rest never pays for it)."""
        from mcp.server.transport_security import TransportSecuritySettings
        from morphz_client.mcp_server import build_server

        server = build_server()
        any_host = "*" in settings.ALLOWED_HOSTS
        self.app = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(
                enable_dns_rebinding_protection=not any_host,
                allowed_hosts=_hosts(),
                allowed_origins=[
                    f"{scheme}://{h}" for h in _hosts() for scheme in ("http", "https")
                ],
            ),
        )
        self.server = server

    async def _ensure_started(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._runner is not None:
                return
            await asyncio.to_thread(self._build)
            started = asyncio.Event()
            self._runner = asyncio.get_running_loop().create_task(self._run_manager(started))
            await started.wait()

    async def _run_manager(self, started: asyncio.Event) -> None:
        async with self.server.session_manager.run():
            started.set()
            await asyncio.Event().wait()  # for the life of the process

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        raw = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        from memory.contexts import authenticate_token

        token = (
            await sync_to_async(authenticate_token, thread_sensitive=False)(raw) if raw else None
        )
        if token is None:
            await _unauthorized(
                send, "a context's API token is required: Authorization: Bearer mz_..."
            )
            return
        await self._ensure_started()
        from morphz_client.mcp_server import current_client  # imported by _ensure_started

        current_client.set(self._client(raw, token.context.slug))
        if scope["path"] == MCP_PATH.rstrip("/"):
            scope = {**scope, "path": MCP_PATH, "raw_path": MCP_PATH.encode()}
        await self.app(scope, receive, send)

    def _client(self, raw: str, slug: str) -> Any:
        from morphz_client.client import MorphzClient

        host = next(iter(_hosts()), "localhost")
        http = httpx.Client(
            transport=httpx.WSGITransport(app=self.django_app),
            base_url=f"http://{host}",
            timeout=60,
        )
        return MorphzClient(f"http://{host}", raw, context=slug, http=http)


async def _unauthorized(send: Any, message: str) -> None:
    body = json.dumps(
        {"error": {"code": "not_authenticated", "message": message, "details": []}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="morphz"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
