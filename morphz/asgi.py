"""ASGI entry point: HTTP through Django, websockets through Channels (explorer live updates),
MCP at /mcp/. Importing it does nothing: the database, Django and the in-process indexer start
on the first event (the lifespan startup, or the first connection when lifespan is off)."""

from __future__ import annotations

import functools
import gc
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from morphz.serving import WSGIApp

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")


@functools.cache
def django_http_app() -> WSGIApp:
    """Django's WSGI app as served (a full collection after large bodies), the embedded
    database started first. Plain HTTP runs it in one thread hop per request
    (morphz/serving.py says why not Django's ASGI handler)."""
    from morphz.embedded_db import ensure_database

    ensure_database()

    from django.core.wsgi import get_wsgi_application

    from morphz.serving import CollectAfterLargeBodies

    return CollectAfterLargeBodies(get_wsgi_application())


def build() -> Any:
    """The served app: starts the database, Django and the in-process indexer."""
    from morphz.serving import HeavyReadsPerToken, OneHopHTTP, RefuseLargeBodies

    django_app = django_http_app()

    from channels.auth import AuthMiddlewareStack
    from channels.routing import ProtocolTypeRouter, URLRouter
    from channels.security.websocket import AllowedHostsOriginValidator

    from explorer.routing import websocket_urlpatterns
    from memory.search.indexer import start_background_indexer
    from morphz.mcp_http import McpApp

    start_background_indexer()
    # A thread rendering a large answer holds the GIL for up to this long before another
    # may run; Python's default (5 ms) multiplied every other request's latency by the
    # handoffs it needs while heavy reads ran (reliability/noisy.py).
    sys.setswitchinterval(0.001)

    http_app = OneHopHTTP(django_app)
    # MCP over streamable HTTP at /mcp/ (R48): same per-context bearer tokens as the REST API.
    mcp_app = McpApp(django_app)

    async def http_with_mcp(scope: Any, receive: Any, send: Any) -> None:
        if scope["path"] == "/mcp" or scope["path"].startswith("/mcp/"):
            await mcp_app(scope, receive, send)
        else:
            await http_app(scope, receive, send)

    # What start-up loaded lives as long as the process: moved out of the collector's reach,
    # the full collection after each large answer scans only what requests made
    # (BENCHMARKS.md has the measurement).
    gc.collect()
    gc.freeze()
    return ProtocolTypeRouter(
        {
            "http": RefuseLargeBodies(HeavyReadsPerToken(http_with_mcp)),
            "websocket": AllowedHostsOriginValidator(
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
            ),
        }
    )


class Morphz:
    """The ASGI application: builds the served app once, on its first event, and answers
    the lifespan protocol (startup builds it, so a server that sends lifespan events starts
    everything before it accepts a connection)."""

    def __init__(self) -> None:
        self._app: Any = None
        self._lock = threading.Lock()

    def app(self) -> Any:
        """The served app, built on the first call."""
        with self._lock:
            if self._app is None:
                self._app = build()
        return self._app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        await self.app()(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self.app()
                    from morphz.supervisor import die_with_serving_parent  # needs Django

                    die_with_serving_parent()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    raise
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


application = Morphz()
