"""The HTTP protocol the server runs: uvicorn's httptools protocol plus the limits it lacks.

How it works: docs/internals.md, section `morphz/http_protocol.py`."""

from __future__ import annotations

import asyncio
import json
import resource
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# Descriptors kept free of client connections: database pool, log files, the indexer's pipe,
# temporary files of answers being sent, websockets' extra handles.
RESERVED_DESCRIPTORS = 128


def raise_descriptor_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; returns the new soft limit
    (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 16)
    if soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


def connection_limit(configured: int = 0) -> int:
    """Open connections one server process keeps: `configured` when set (> 0), else the
    soft file-descriptor limit less RESERVED_DESCRIPTORS (at least 16)."""
    if configured > 0:
        return configured
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 16
    return max(16, soft - RESERVED_DESCRIPTORS)


# The longest request target httptools.parse_url reads (it keeps offsets in 16 bits); a
# longer one is answered 413 `too_large` here, before uvicorn's parser refuses it as text.
URL_MAX_BYTES = 65_535


class _UrlTooLong(Exception):
    """Stops the parser on a URL past URL_MAX_BYTES (uvicorn then calls send_400_response)."""


HTTP_PROTOCOL = "morphz.http_protocol:MorphzHttpProtocol"  # uvicorn's --http / Config(http=...)

# Connections waiting for a request's headers, oldest first (one server per process; a dict
# keeps insertion order and removes in O(1)).
_waiting: dict[MorphzHttpProtocol, None] = {}


class MorphzHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with header, body and send deadlines and shedding of
    connections that never sent a request (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from django.conf import settings

        self.header_timeout = float(settings.MORPHZ_HEADER_TIMEOUT)
        self.body_timeout = float(settings.MORPHZ_BODY_TIMEOUT)
        self.send_timeout = float(settings.MORPHZ_SEND_TIMEOUT)
        if self.limit_concurrency is None:  # a bare `uvicorn` command line: the same limit
            self.limit_concurrency = connection_limit(settings.MORPHZ_MAX_CONNECTIONS)
        self.deadline: asyncio.TimerHandle | None = None
        self.send_deadline: asyncio.TimerHandle | None = None
        self.url_too_long = False

    # Headers ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._wait_for_headers()
        self._shed()

    def _wait_for_headers(self) -> None:
        _waiting[self] = None
        self._arm(self.header_timeout)

    def on_headers_complete(self) -> None:
        _waiting.pop(self, None)
        # The body deadline; cancelled at once by on_message_complete when there is none.
        self._arm(self.body_timeout)
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._arm(self.body_timeout)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._wait_for_headers()

    # A URL too long to parse -----------------------------------------------------------

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > URL_MAX_BYTES:
            self.url_too_long = True
            raise _UrlTooLong

    def data_received(self, data: bytes) -> None:
        if self.url_too_long:
            return  # answered: the rest of the request is read and dropped
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's plain-text answer to a request its parser refused; a URL too long to
        parse gets the API's JSON 413 instead. The client may still be sending it: the
        connection stops writing but reads (and drops) until the client closes or the
        header deadline, as a close with unread bytes would reset the answer away."""
        if not self.url_too_long:
            super().send_400_response(msg)
            return
        from api.errors import error_body
        from memory.errors import ErrorCode

        code = ErrorCode.TOO_LARGE
        message = f"the request URL is longer than {URL_MAX_BYTES} bytes; send a shorter one"
        details = [{"limit_bytes": URL_MAX_BYTES, "part": "url"}]
        body = json.dumps(error_body(code, message, details)).encode()
        head = [f"HTTP/1.1 {code.status} {HTTPStatus(code.status).phrase}\r\n".encode()]
        head += [
            name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers
        ]
        head.append(b"content-type: application/json\r\n")
        head.append(b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        else:
            self.transport.close()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self.deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _expired(self) -> None:
        """Headers or body too slow: the connection goes (a request in progress sees a
        disconnect)."""
        self.deadline = None
        self._abort()

    def _abort(self) -> None:
        _waiting.pop(self, None)
        self._disarm()
        self.transport.abort()

    def handle_websocket_upgrade(self) -> None:
        # A websocket has its own protocol (and ping timeouts) from here on.
        _waiting.pop(self, None)
        self._disarm()
        super().handle_websocket_upgrade()

    # Shedding --------------------------------------------------------------------------

    def _shed(self) -> None:
        """Keep the open connections below uvicorn's limit by closing those that waited
        longest for headers (never this new one: it has not had its chance yet)."""
        limit = self.limit_concurrency
        if limit is None:
            return
        while len(self.connections) >= limit:
            victim = next((c for c in _waiting if c is not self), None)
            if victim is None:
                return  # every other connection is serving a request: uvicorn answers 503
            self.connections.discard(victim)
            victim._abort()

    # Send ------------------------------------------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.send_deadline is None:
            self.send_deadline = self.loop.call_later(self.send_timeout, self._send_expired)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.send_deadline is not None:
            self.send_deadline.cancel()
            self.send_deadline = None

    def _send_expired(self) -> None:
        """The client read nothing for send_timeout seconds: drop the answer and the
        connection (abort frees the buffered bytes; close would wait for the client)."""
        self.send_deadline = None
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        _waiting.pop(self, None)
        self._disarm()
        if self.send_deadline is not None:
            self.send_deadline.cancel()
            self.send_deadline = None
        super().connection_lost(exc)
