"""Heavy reads wait their turn per caller (ASGI middleware, mounted by morphz.asgi with
the rest of morphz/serving.py): see `HeavyReadsPerToken`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


# GETs whose answer can be tens of megabytes: a diff, the lists, a frame with its body, a
# stored evaluation (the compiled view).
HEAVY_READ = re.compile(
    r"^/api/v1/contexts/[^/]+/"
    r"(diff|events|frames|relations|transactions|frames/[^/]+(/body)?|evaluations/\d+)/$"
)


class HeavyReadsPerToken:
    """ASGI middleware: at most MORPHZ_HEAVY_READS_PER_TOKEN heavy reads (HEAVY_READ) per
    caller are built at once (until their answer starts: sending it, as slow as its client,
    holds no turn); the others wait here, on the event loop, holding no worker thread
    and no database connection. Measured before: 8 readers of 16 MB diffs on one token
    held every worker thread and took another context's trivial GET from 8 ms to 2.55 s.

    The caller is its Authorization header, else its session cookie, else its address, as
    sent (a wrong token only queues behind itself and is refused by the view)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app
        self.gates: dict[bytes, tuple[asyncio.Semaphore, int]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or not HEAVY_READ.match(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        key = caller_key(scope)
        gate, users = self.gates.get(key) or (
            asyncio.Semaphore(settings.MORPHZ_HEAVY_READS_PER_TOKEN),
            0,
        )
        self.gates[key] = (gate, users + 1)
        held = False
        began = 0.0
        loop = asyncio.get_running_loop()

        def release() -> None:
            # The turn rests MORPHZ_HEAVY_READS_REST times as long as the answer took to
            # build before the caller's next heavy read may start: one caller's heavy reads
            # take at most 1 / (1 + rest) of a worker's time, and others get the rest.
            nonlocal held
            held = False
            rest = (loop.time() - began) * settings.MORPHZ_HEAVY_READS_REST
            if rest > 0:
                self._join(key, gate)  # the entry (and so the rest) outlives this request

                def rested() -> None:
                    gate.release()
                    self._leave(key)

                loop.call_later(rest, rested)
            else:
                gate.release()

        async def send_releasing(message: dict[str, Any]) -> None:
            # The answer is built once it starts: its sending (as slow as its client) must
            # not hold the caller's other heavy reads back.
            if held and message["type"] == "http.response.start":
                release()
            await send(message)

        try:
            await gate.acquire()
            held = True
            began = loop.time()
            await self.app(scope, receive, send_releasing)
        finally:
            if held:
                release()
            self._leave(key)

    def _join(self, key: bytes, gate: asyncio.Semaphore) -> None:
        _gate, users = self.gates.get(key, (gate, 0))
        self.gates[key] = (gate, users + 1)

    def _leave(self, key: bytes) -> None:
        gate, users = self.gates[key]
        if users == 1:
            del self.gates[key]  # no caller left: the table holds only active callers
        else:
            self.gates[key] = (gate, users - 1)


def caller_key(scope: Scope) -> bytes:
    """Who a request is from, for HeavyReadsPerToken: a digest of its bearer token or
    session cookie, else its client address."""
    cookie = b""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return b"a" + hashlib.sha256(value).digest()
        if name == b"cookie":
            cookie = value
    if cookie:
        return b"c" + hashlib.sha256(cookie).digest()
    client = scope.get("client") or ("", 0)
    return b"i" + str(client[0]).encode()
