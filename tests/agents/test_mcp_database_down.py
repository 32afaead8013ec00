"""MCP over HTTP with PostgreSQL down: a fast 503 whose body is a JSON-RPC error carrying
`database_unavailable` and the wait, with Retry-After (as the REST API answers), never a
500 in plain text; and MCP works again on its own once the database is back.

The server talks to the test database through a TCP proxy; cutting the proxy is, to the
server, PostgreSQL dying (as in tests/api/test_database_down.py)."""

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

LIST = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}


@pytest.fixture
def served(transactional_db: Any, tmp_path: Any) -> Iterator[dict[str, Any]]:
    token = issue_token(create_context("mcp-down")).raw
    settings = connection.settings_dict
    proxy = PgProxy(*target_of(settings)).start()
    web = free_port()
    env = {
        "DATABASE_URL": proxy.url(settings["NAME"], settings.get("USER") or "postgres"),
        "MORPHZ_DB_POOL_MAX": "4",
    }
    proc = start_server(web, env, log=tmp_path / "server.log")
    base = f"http://127.0.0.1:{web}"
    try:
        wait_until_serving(base, proc)
        yield {"proxy": proxy, "base": base, "token": token}
    finally:
        stop(proc)
        proxy.cut()


def _post(served: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"{served['base']}/mcp/",
        json=LIST,
        headers={
            "Authorization": f"Bearer {served['token']}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=40,
    )


@pytest.mark.slow
def test_mcp_with_the_database_down_is_a_json_rpc_503(served: dict[str, Any]) -> None:
    assert _post(served).status_code == 200
    served["proxy"].cut()
    started = time.monotonic()
    answer = _post(served)
    assert time.monotonic() - started < 2.5
    assert answer.status_code == 503, answer.text[:300]
    assert answer.headers["content-type"] == "application/json"
    assert int(answer.headers["Retry-After"]) >= 1
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["data"]["code"] == "database_unavailable"
    assert body["error"]["data"]["retry_after_seconds"] >= 1
    assert "retry" in body["error"]["message"]
    served["proxy"].restore()
    deadline = time.monotonic() + 10
    while (answer := _post(served)).status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert answer.status_code == 200
    assert "create_entities" in answer.text
