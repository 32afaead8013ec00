"""MCP over streamable HTTP at /mcp/ (R48), for `morphz.asgi`.

How it works: docs/internals.md, section `morphz/mcp_http.py`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings

from api.auth import bearer_token
from api.errors import (
    MIGRATIONS_PENDING_MESSAGE,
    RETRY_AFTER_SECONDS,
    ApiError,
    database_unavailable,
    error_body,
    schema_behind,
)
from api.parsers import check_value
from memory.errors import ErrorCode
from memory.strictjson import loads_strict
from morphz.database_hint import database_hint
from morphz.serving import send_json, too_large_body

log = logging.getLogger(__name__)

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
        raw = bearer_token(headers.get(b"authorization", b"")) or ""
        try:
            token, refusal = (
                await sync_to_async(_authenticate, thread_sensitive=False)(raw)
                if raw
                else (None, "a context's API token is required: Authorization: Bearer mz_...")
            )
        except Exception as exc:
            if schema_behind(exc):
                log.error("%s", database_hint(exc))
                await _migrations_pending(send)
                return
            if not database_unavailable(exc):
                raise
            await _unavailable(send)
            return
        if token is None:
            await _unauthorized(send, refusal)
            return
        if scope.get("method") == "POST":
            body = await _read_checked(receive, send)
            if body is None:
                return
            receive = _replay(body, receive)
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


def _authenticate(raw: str) -> tuple[Any, str]:
    """The token row (with its context) for `raw`, or None and why it was refused. Runs on
    an executor thread outside any request, so it hands its database connection back
    itself: nothing else would, and the thread would hold it for the life of the process."""
    from django.db import connection

    from memory.contexts import authenticate_token, token_refusal

    try:
        token = authenticate_token(raw)
        return token, "" if token is not None else token_refusal(raw)
    finally:
        connection.close()


def _body_limit() -> int:
    """The smaller of our request limit and the SDK's own (which answers in plain text)."""
    from mcp.server.streamable_http_manager import DEFAULT_MAX_REQUEST_BODY_SIZE

    return min(settings.MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_BODY_SIZE)


async def _read_checked(receive: Any, send: Any) -> bytes | None:
    """The whole POST body, or None once an error has been sent: 413 `too_large` (JSON, as
    on the REST API) past the limit, a JSON-RPC parse error for malformed JSON or a key given
    twice (the SDK's parser would keep the last value silently)."""
    limit = _body_limit()
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await send_json(send, 413, too_large_body(limit), close=True)
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    try:
        # Text the database cannot store (a lone surrogate, NUL) is refused here as REST
        # refuses it, naming the field: the SDK's reader calls a lone surrogate "unexpected
        # end of hex escape".
        check_value(loads_strict(body))
    except (ValueError, ApiError) as exc:
        reason = exc.message if isinstance(exc, ApiError) else str(exc)
        error = {"code": -32700, "message": f"Parse error: {reason}"[:300]}
        await send_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
        return None
    return body


def _replay(body: bytes, receive: Any) -> Any:
    """An ASGI receive callable giving the body already read once, then the connection's own
    messages (a disconnect)."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: dict[str, Any] = await receive()
        return message

    return replay


# JSON-RPC's "server error" range (-32000 to -32099) is for implementation-defined errors.
DATABASE_UNAVAILABLE_RPC = -32003
MIGRATIONS_PENDING_RPC = -32004


async def _unavailable(send: Any) -> None:
    """PostgreSQL cannot be reached: 503 with Retry-After, the body a JSON-RPC error (id null:
    the request was not read) whose data carries the REST API's code and the wait, so an MCP
    client reads why and when to retry."""
    message = "the database is unavailable; nothing was written, retry shortly"
    data = {"code": ErrorCode.DATABASE_UNAVAILABLE, "retry_after_seconds": RETRY_AFTER_SECONDS}
    error = {"code": DATABASE_UNAVAILABLE_RPC, "message": message, "data": data}
    retry = [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
    await send_json(send, 503, {"jsonrpc": "2.0", "id": None, "error": error}, headers=retry)


async def _migrations_pending(send: Any) -> None:
    """The database lacks this code's tables: 503 with the REST API's code in a JSON-RPC
    error (id null: the request was not read)."""
    data = {"code": ErrorCode.MIGRATIONS_PENDING}
    error = {"code": MIGRATIONS_PENDING_RPC, "message": MIGRATIONS_PENDING_MESSAGE, "data": data}
    await send_json(send, 503, {"jsonrpc": "2.0", "id": None, "error": error})


async def _unauthorized(send: Any, message: str) -> None:
    body = error_body(ErrorCode.NOT_AUTHENTICATED, message)
    challenge = [(b"www-authenticate", b'Bearer realm="morphz"')]
    await send_json(send, 401, body, headers=challenge)
