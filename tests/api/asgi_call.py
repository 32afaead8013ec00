"""Call an ASGI app from a synchronous test, on a fresh event loop in its own thread (a test
before may have left an event loop running in the main thread)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_asgi(app: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, app(scope, receive, send)).result()
