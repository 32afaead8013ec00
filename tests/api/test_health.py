"""/api/health/live/ and /api/health/ready/: what a load balancer or an orchestrator asks.
Live answers while the process serves, without the database; ready answers 200 only when
the database is reachable and migrated, else a 503 whose code says which, naming nothing of
the deployment. Neither takes a token or counts against a throttle."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from api.throttling import ContextTokenRateThrottle
from tests.api.conftest import error_of
from tests.test_commands_name_the_database_fix import empty_database  # noqa: F401


def _health_paths() -> list[str]:
    """Every route under /api/health/, read from the URL configuration."""
    paths = []
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLResolver) and str(entry.pattern) == "api/":
            for pattern in entry.url_patterns:
                route = str(pattern.pattern)
                if isinstance(pattern, URLPattern) and route.startswith("health/"):
                    paths.append(f"/api/{route}")
    return paths


def _pointed_at(monkeypatch: Any, **changes: Any) -> None:
    """This process's default database is now `changes` applied to the test database's
    settings (the connections already open keep theirs)."""
    default = {**connection.settings_dict, **changes}
    monkeypatch.setattr(settings, "DATABASES", {**settings.DATABASES, "default": default})


def test_there_are_a_live_and_a_ready_route() -> None:
    assert _health_paths() == ["/api/health/live/", "/api/health/ready/"]


def test_live_answers_without_a_token_or_a_database(monkeypatch: Any) -> None:
    # No `db` fixture: any query would fail the test; an unreachable database changes nothing.
    _pointed_at(monkeypatch, HOST="127.0.0.1", PORT="1")
    response = APIClient().get("/api/health/live/")
    assert response.status_code == 200
    assert response.json() == {"status": "live"}


def test_ready_answers_200_on_a_migrated_database(db: Any) -> None:
    response = APIClient().get("/api/health/ready/")
    assert response.status_code == 200
    assert response.json() == {"status": "ready"}


def test_ready_answers_503_database_unavailable_when_the_server_refuses(monkeypatch: Any) -> None:
    _pointed_at(monkeypatch, HOST="127.0.0.1", PORT="1")
    response = APIClient().get("/api/health/ready/")
    assert response.status_code == 503
    assert error_of(response)["code"] == "database_unavailable"
    assert response["Retry-After"]
    assert "127.0.0.1" not in response.content.decode()


def test_ready_gives_up_on_a_silent_server_within_the_connect_timeout(monkeypatch: Any) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        _pointed_at(monkeypatch, HOST="127.0.0.1", PORT=str(silent.getsockname()[1]))
        started = time.monotonic()
        response = APIClient().get("/api/health/ready/")
        took = time.monotonic() - started
    assert response.status_code == 503
    assert error_of(response)["code"] == "database_unavailable"
    assert took < connection.settings_dict["OPTIONS"]["connect_timeout"] + 0.5, took


def test_ready_answers_503_migrations_pending_on_an_empty_database(
    monkeypatch: Any,
    empty_database: dict[str, Any],  # noqa: F811
) -> None:
    _pointed_at(monkeypatch, NAME=empty_database["NAME"])
    response = APIClient().get("/api/health/ready/")
    assert response.status_code == 503
    error = error_of(response)
    assert error["code"] == "migrations_pending"
    assert "manage.py migrate" in error["message"]
    assert empty_database["NAME"] not in response.content.decode()


@pytest.mark.parametrize("path", _health_paths())
def test_a_probe_is_never_refused_for_its_token_or_its_rate(
    db: Any, monkeypatch: Any, path: str
) -> None:
    monkeypatch.setattr(ContextTokenRateThrottle, "THROTTLE_RATES", {"context_token": "1/min"})
    client = APIClient(HTTP_AUTHORIZATION="Bearer mz_not_a_token")
    statuses = {client.get(path).status_code for _ in range(3)}
    assert statuses == {200}
