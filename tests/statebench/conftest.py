"""Fixtures for the STATE-Bench integration (integrations/statebench, `morphz_statebench`).

The package talks to Morphz only over REST through the client. Most tests serve the API
in-process (httpx's WSGI transport on the test database, no socket); the orchestrator test
needs a real server (pytest-django's live server) because the benchmark runs in its own
Python 3.12 process. The shared STATE-Bench data and checkout (../shared) are required:
without them these tests skip with the reason, except under CI=true, where they fail.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.live import unthrottled  # noqa: F401  (a fixture)

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DATA = SHARED / "benchdata" / "state-bench"
STATEBENCH = SHARED / "third_party" / "STATE-Bench"
INTEGRATION = ROOT / "integrations" / "statebench"
if str(INTEGRATION) not in sys.path:
    sys.path.insert(0, str(INTEGRATION))
if str(ROOT / "client") not in sys.path:
    sys.path.insert(0, str(ROOT / "client"))


def need(path: Path, what: str) -> Path:
    if not path.exists():
        message = f"{what} not found at {path} (the shared STATE-Bench files)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def data_dir() -> Path:
    return need(DATA / "train_trajectories", "STATE-Bench train trajectories").parent


@pytest.fixture
def statebench_dir() -> Path:
    return need(STATEBENCH / "state_bench", "the STATE-Bench checkout").parent


@pytest.fixture
def rest(db: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A factory of MorphzClients for a context, over the REST API served in-process."""
    request.getfixturevalue("unthrottled")
    import httpx
    from django.core.signals import request_finished, request_started
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections
    from morphz_client import MorphzClient

    app = get_wsgi_application()
    # As Django's own test client does: a request's end must not close the test's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    opened: list[Any] = []

    def make(slug: str, token: str) -> Any:
        http = httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://testserver")
        client = MorphzClient("http://testserver", token, context=slug, http=http)
        opened.append(http)
        return client

    yield make
    for http in opened:
        http.close()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def history_served() -> None:
    """Forks and frozen contexts (R53, R54) come from the history work; until a build serves
    them, the tests that need them say so instead of failing on a missing route."""
    from django.urls import NoReverseMatch, reverse

    try:
        reverse("api-forks", kwargs={"slug": "x"})
    except NoReverseMatch:
        pytest.skip("this build does not serve forks (POST forks/, R53) yet")
