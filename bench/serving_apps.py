"""The HTTP stacks `bench/bench_servers.py` compares, as importable applications.

Each ASGI variant routes websockets exactly as morphz/asgi.py does (Channels) and differs only
in how plain HTTP reaches Django:

- `onehop`       our own bridge, morphz/serving.py (one executor-thread hop per request);
- `a2wsgi_app`   the a2wsgi library's WSGI-to-ASGI middleware around Django's WSGI handler;
- `django_asgi`  Django's own ASGI handler (sync middleware and views hop threads);
- `wsgi`         Django's WSGI handler, for a WSGI server (HTTP only: websockets would need
                 an ASGI server beside it).
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")

from morphz.embedded_db import ensure_database

ensure_database()

from django.core.wsgi import get_wsgi_application  # noqa: E402

from morphz.serving import CollectAfterLargeBodies, OneHopHTTP  # noqa: E402

wsgi = CollectAfterLargeBodies(get_wsgi_application())  # django.setup() before models

from a2wsgi import WSGIMiddleware  # noqa: E402
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402

from explorer.routing import websocket_urlpatterns  # noqa: E402


def _router(http: object) -> ProtocolTypeRouter:
    return ProtocolTypeRouter(
        {
            "http": http,
            "websocket": AllowedHostsOriginValidator(
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
            ),
        }
    )


onehop = _router(OneHopHTTP(wsgi))
a2wsgi_app = _router(WSGIMiddleware(wsgi, workers=10))  # type: ignore[arg-type]
django_asgi = _router(get_asgi_application())
