"""ASGI entry point: HTTP through Django, websockets through Channels (explorer live updates)."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")

from morphz.embedded_db import ensure_database

ensure_database()

from django.core.wsgi import get_wsgi_application  # noqa: E402

# Plain HTTP runs Django's (synchronous) request cycle in one thread hop per request; see
# api/serving.py for why not Django's ASGI handler.
django_http_app = get_wsgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from api.serving import OneHopHTTP  # noqa: E402
from explorer.routing import websocket_urlpatterns  # noqa: E402
from memory.search.indexer import start_background_indexer  # noqa: E402

start_background_indexer()

application = ProtocolTypeRouter(
    {
        "http": OneHopHTTP(django_http_app),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
