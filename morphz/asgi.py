"""ASGI entry point: HTTP through Django, websockets through Channels (explorer live updates)."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")

from morphz.embedded_db import ensure_database

ensure_database()

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from explorer.routing import websocket_urlpatterns  # noqa: E402
from memory.indexer import start_background_indexer  # noqa: E402

start_background_indexer()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
