"""PostgreSQL down -> a JSON 503 `database_unavailable` within about a
second (not a 30 s hang and a 500), and recovery on its own when the database is back.

A real server process talks to the test database through a TCP proxy; cutting the proxy
is, to the server, PostgreSQL dying (every connection reset, new ones refused)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.db import connection

from memory.contexts import create_context, issue_token
from morphz.devserver import free_port
from reliability.faults import PgProxy, start_server, stop, target_of, wait_until_serving


@pytest.fixture
def served(transactional_db: Any, tmp_path: Any) -> Iterator[dict[str, Any]]:
    context = create_context("down")
    token = issue_token(context).raw
    settings = connection.settings_dict
    host, port = target_of(settings)
    proxy = PgProxy(host, port).start()
    web = free_port()
    env = {
        "DATABASE_URL": proxy.url(settings["NAME"], settings.get("USER") or "postgres"),
        "MORPHZ_DB_POOL_MAX": "4",
    }
    proc = start_server(web, env, log=tmp_path / "server.log")
    base = f"http://127.0.0.1:{web}"
    try:
        wait_until_serving(base, proc)
        yield {"proxy": proxy, "base": base, "token": token, "proc": proc}
    finally:
        stop(proc)
        proxy.cut()


def _get(base: str, token: str) -> httpx.Response:
    return httpx.get(
        f"{base}/api/v1/contexts/down/", headers={"Authorization": f"Bearer {token}"}, timeout=40
    )


def test_a_dead_database_is_a_fast_json_503_and_recovery_is_automatic(
    served: dict[str, Any],
) -> None:
    base, token, proxy = served["base"], served["token"], served["proxy"]
    assert _get(base, token).status_code == 200
    proxy.cut()
    for attempt in range(3):
        started = time.monotonic()
        response = _get(base, token)
        took = time.monotonic() - started
        assert response.status_code == 503, (attempt, response.status_code, response.text[:300])
        assert response.json()["error"]["code"] == "database_unavailable"
        assert response.headers.get("Retry-After")
        assert took < 2.5, took
    write = httpx.post(
        f"{base}/api/v1/contexts/down/events/",
        json={"kind": "tool_result", "content": "x"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=40,
    )
    assert write.status_code == 503
    assert write.json()["error"]["code"] == "database_unavailable"
    proxy.restore()
    deadline = time.monotonic() + 10
    while True:
        response = _get(base, token)
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert response.status_code == 200, response.text[:300]
