"""ASGI entry point: HTTP through Django, websockets through Channels (explorer live updates)."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")

from morphz.embedded_db import ensure_database

ensure_database()

from django.core.wsgi import get_wsgi_application  # noqa: E402

from api.serving import (  # noqa: E402
    CollectAfterLargeBodies,
    HeavyReadsPerToken,
    OneHopHTTP,
    RefuseLargeBodies,
)

# Plain HTTP runs Django's (synchronous) request cycle in one thread hop per request; see
# api/serving.py for why not Django's ASGI handler.
django_http_app = CollectAfterLargeBodies(get_wsgi_application())

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from explorer.routing import websocket_urlpatterns  # noqa: E402
from memory.search.indexer import start_background_indexer  # noqa: E402

start_background_indexer()

from api.mcp_http import McpApp  # noqa: E402

# A thread rendering a large answer holds the GIL for up to this long before another may run;
# Python's default (5 ms) multiplied every other request's latency by the handoffs it
# needs while heavy reads ran (reliability/noisy.py).
sys.setswitchinterval(0.001)

http_app = OneHopHTTP(django_http_app)
# MCP over streamable HTTP at /mcp/ (R48): same per-context bearer tokens as the REST API.
mcp_app = McpApp(django_http_app)


async def http_with_mcp(scope: Any, receive: Any, send: Any) -> None:
    if scope["path"] == "/mcp" or scope["path"].startswith("/mcp/"):
        await mcp_app(scope, receive, send)
    else:
        await http_app(scope, receive, send)


# Everything loaded at start-up lives as long as the process: moved out of the collector's
# reach (after one collection of start-up garbage), the full collection that follows each
# large answer (api/serving.py, CollectAfterLargeBodies) scans only what requests made.
# Measured: 65 ms of CPU per collection before, with the GIL held (every other request of
# the process waited: reliability/noisy.py), 0.005 ms after.
gc.collect()
gc.freeze()

application = ProtocolTypeRouter(
    {
        "http": RefuseLargeBodies(HeavyReadsPerToken(http_with_mcp)),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
