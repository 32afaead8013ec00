"""Plain HTTP under ASGI in one worker-thread hop per request.

How it works: docs/internals.md, section `morphz/serving.py`."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import sys
from collections.abc import Awaitable, Callable, Iterable
from io import BytesIO
from tempfile import SpooledTemporaryFile
from typing import IO, TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings

# Re-exported: morphz.asgi mounts all the HTTP middleware from this module.
from morphz.heavy_reads import HeavyReadsPerToken as HeavyReadsPerToken
from morphz.heavy_reads import Receive, Scope, Send

if TYPE_CHECKING:
    from memory.shapes.errors import ErrorBody

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

IN_MEMORY_BODY = 256 * 1024  # larger bodies (requests and answers) spill to a temporary file
SEND_CHUNK = 64 * 1024  # an answer is handed to the connection this much at a time
COLLECT_ABOVE_BYTES = 1024 * 1024  # request + response bytes that trigger a full collection


class Disconnected(Exception):
    pass


def wsgi_environ(scope: Scope, body: IO[bytes]) -> dict[str, Any]:
    """The WSGI environ for an ASGI HTTP scope (PEP 3333 string rules: latin-1)."""
    root = scope.get("root_path", "")
    path = scope["path"]
    if root and path.startswith(root):
        path = path[len(root) :]
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root.encode("utf8").decode("latin1"),
        "PATH_INFO": path.encode("utf8").decode("latin1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin1"),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] if server[1] is not None else 80),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    client = scope.get("client")
    if client:
        environ["REMOTE_ADDR"] = client[0]
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin1").upper().replace("-", "_")
        if name not in ("CONTENT_LENGTH", "CONTENT_TYPE"):
            name = f"HTTP_{name}"
        value = raw_value.decode("latin1")
        environ[name] = f"{environ[name]},{value}" if name in environ else value
    return environ


class RefuseLargeBodies:
    """ASGI middleware: a request whose Content-Length header exceeds MAX_REQUEST_BYTES is
    answered 413 `too_large` at once, before a byte of its body is read (a client declaring
    99,999,999,999 bytes does not hold a worker while it sends them). The connection is then
    closed, since the unread body cannot be skipped cheaply."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            limit = settings.MAX_REQUEST_BYTES
            for name, value in scope.get("headers", []):
                if name.lower() == b"content-length" and _declared(value) > limit:
                    await send_json(send, 413, too_large_body(limit), close=True)
                    return
        await self.app(scope, receive, send)


def _declared(value: bytes) -> int:
    try:
        return int(value)
    except ValueError:
        return 0  # not a number: Django's own check answers 400 for it


def too_large_body(limit: int) -> ErrorBody:
    from api.errors import TooLarge, error_body

    error = TooLarge(limit)
    return error_body(error.code, error.message, error.details)


async def send_json(
    send: Send,
    status: int,
    data: Any,
    *,
    close: bool = False,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Answer `status` with `data` as JSON (and `headers`); `close` ends the connection."""
    body = json.dumps(data).encode()
    sent = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    sent.extend(headers)
    if close:
        sent.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": sent})
    await send({"type": "http.response.body", "body": body})


class CollectAfterLargeBodies:
    """WSGI middleware: a full garbage collection after a request whose body or response
    exceeded COLLECT_ABOVE_BYTES, once the response is closed (so the request's cycles are
    unreachable by then). Costs a collection (~10 ms) only after requests that moved that
    many bytes, which themselves take longer than that."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        size = _int(environ.get("CONTENT_LENGTH"))

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            nonlocal size
            for name, value in headers:
                if name.lower() == "content-length":
                    size += _int(value)
            return start_response(status, headers, exc_info)

        result = self.app(environ, start)
        return _Collecting(result, lambda: size)


def _load_malloc_trim() -> Callable[[], Any]:
    """glibc's malloc_trim(0): hand freed heap pages back to the system (no-op elsewhere)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    return lambda: trim(0)


_malloc_trim = _load_malloc_trim()


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


class _Collecting:
    """The app's response iterable; close() closes it, drops it, then collects if large."""

    def __init__(self, result: Iterable[bytes], size: Callable[[], int]) -> None:
        self.result: Iterable[bytes] | None = result
        self.size = size

    def __iter__(self) -> Any:
        assert self.result is not None
        return iter(self.result)

    def close(self) -> None:
        result, self.result = self.result, None
        close = getattr(result, "close", None)
        try:
            if close is not None:
                close()
        finally:
            del result, close
            if self.size() > COLLECT_ABOVE_BYTES:
                gc.collect()
                _malloc_trim()


def run_wsgi(
    app: WSGIApp, environ: dict[str, Any]
) -> tuple[int, list[tuple[bytes, bytes]], IO[bytes], int]:
    """Run the WSGI app to completion in this thread: status, headers, the body as a file
    positioned at its start, and the body's size. A body over IN_MEMORY_BODY bytes is
    spooled to a temporary file, so an answer waiting for a slow client holds no memory."""
    started: list[Any] = []
    body: IO[bytes] = SpooledTemporaryFile(max_size=IN_MEMORY_BODY)  # noqa: SIM115
    size = 0

    def write(data: bytes) -> None:
        nonlocal size
        body.write(data)
        size += len(data)

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if exc_info is not None and started:
            raise exc_info[1].with_traceback(exc_info[2])
        started[:] = [status, headers]
        return write

    try:
        result = app(environ, start_response)
        try:
            for chunk in result:
                write(chunk)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()  # fires request_finished: the database connection goes back to the pool
    except BaseException:
        body.close()
        raise
    status, headers = started
    encoded = [(n.lower().encode("latin1"), v.encode("latin1")) for n, v in headers]
    body.seek(0)
    return int(status.split(" ", 1)[0]), encoded, body, size


async def send_body(send: Send, body: IO[bytes], size: int) -> None:
    """Send `size` bytes of `body` in SEND_CHUNK pieces. Each send waits while the
    connection's write buffer is full (uvicorn's flow control), so a client that stops
    reading holds at most a chunk and the transport's buffer; the protocol
    (morphz/http_protocol.py) drops it after MORPHZ_SEND_TIMEOUT seconds without progress."""
    sent = 0
    while True:
        chunk = body.read(SEND_CHUNK) if sent < size else b""
        sent += len(chunk)
        more = bool(chunk) and sent < size
        await send({"type": "http.response.body", "body": chunk, "more_body": more})
        if not more:
            return


class OneHopHTTP:
    """ASGI app for `http` scopes that serves a WSGI app in one thread hop per request."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self.run = sync_to_async(run_wsgi, thread_sensitive=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"OneHopHTTP serves http scopes, not {scope['type']!r}")
        try:
            body, size = await self.read_body(receive)
        except Disconnected:
            return
        with body:
            environ = wsgi_environ(scope, body)
            # A chunked request has no Content-Length, and Django's WSGI request would read
            # it as empty: give the size that was received.
            environ.setdefault("CONTENT_LENGTH", str(size))
            status, headers, content, length = await self.run(self.app, environ)
        with content:
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send_body(send, content, length)

    async def read_body(self, receive: Receive) -> tuple[IO[bytes], int]:
        limit = settings.MAX_REQUEST_BYTES + 1
        first = await receive()
        if first["type"] == "http.disconnect":
            raise Disconnected
        data = first.get("body", b"")
        if not first.get("more_body"):
            data = data[:limit]
            return BytesIO(data), len(data)  # the common case: one message, no temporary file
        # Closed by the caller's `with` (or here on disconnect).
        body: IO[bytes] = SpooledTemporaryFile(max_size=IN_MEMORY_BODY)  # noqa: SIM115
        size = 0
        while True:
            if size < limit:
                kept = data[: limit - size]
                body.write(kept)
                size += len(kept)
            if not first.get("more_body"):
                break
            first = await receive()
            if first["type"] == "http.disconnect":
                body.close()
                raise Disconnected
            data = first.get("body", b"")
        body.seek(0)
        return body, size
