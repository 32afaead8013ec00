"""Helpers for tests that talk HTTP to pytest-django's live server (a real threaded WSGI
server on a free loopback port, on the test database)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def unthrottled(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Property runs send hundreds of requests a minute; the limit is tested elsewhere."""
    from django.core.cache import cache

    from api.throttling import ContextTokenRateThrottle

    monkeypatch.setattr(ContextTokenRateThrottle, "rate", "1000000/min", raising=False)
    cache.clear()
    yield
    cache.clear()


def base_url(live_server: Any) -> str:
    return str(live_server.url)
