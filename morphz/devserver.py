"""Starting the real ASGI server from benchmarks and browser tests, one way everywhere."""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def uvicorn_command(port: int, *, workers: int = 1) -> list[str]:
    """`uvicorn morphz.asgi:application` on 127.0.0.1:`port`, quiet, no access log."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "morphz.asgi:application",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--http",
        "morphz.http_protocol:MorphzHttpProtocol",
        "--lifespan",
        "auto",  # morphz.asgi starts at startup; an older checkout without it still serves
        "--no-access-log",
        "--log-level",
        "warning",
    ]


def database_url(settings: Mapping[str, Any]) -> str:
    """A DATABASE_URL naming the database of Django connection `settings` (for a child
    process that must use the very database a test or benchmark runs on)."""
    user = quote(settings.get("USER") or "")
    password = quote(settings.get("PASSWORD") or "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings.get("HOST") or ""
    name = quote(settings["NAME"])
    if host.startswith("/"):
        return f"postgres://{auth}/{name}?host={quote(host)}"
    port = f":{settings['PORT']}" if settings.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{name}"
