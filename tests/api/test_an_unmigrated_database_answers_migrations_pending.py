"""A server started by hand (not by `serve`, which refuses it) on a database without
Morphz's tables answers the REST API and MCP with a JSON 503 `migrations_pending`, not a
500: before, `GET /api/v1/contexts/x/` was 500 `internal_error` and `/mcp/` a plain-text
"Internal Server Error"."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest
from django.db import connection

from morphz.devserver import database_url, free_port
from reliability.faults import start_server, stop, wait_until_serving

HEADERS = {"Authorization": "Bearer mz_0123456789abcdef0123456789abcdef"}
LIST = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}


def _admin() -> psycopg.Connection[Any]:
    db = connection.settings_dict
    params = {"dbname": db["NAME"], "user": db["USER"], "password": db["PASSWORD"]}
    params.update(host=db["HOST"], port=db["PORT"])
    return psycopg.connect(autocommit=True, **{k: v for k, v in params.items() if v})


@pytest.fixture
def served_on_an_empty_database(db: Any, tmp_path: Any) -> Iterator[str]:
    name = f"morphz_empty_{uuid.uuid4().hex[:10]}"
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    web = free_port()
    env = {"DATABASE_URL": database_url({**connection.settings_dict, "NAME": name})}
    proc = start_server(web, env, log=tmp_path / "server.log")
    base = f"http://127.0.0.1:{web}"
    try:
        wait_until_serving(base, proc)
        yield base
    finally:
        stop(proc)
        with _admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_rest_api_says_migrations_are_pending(served_on_an_empty_database: str) -> None:
    response = httpx.get(
        f"{served_on_an_empty_database}/api/v1/contexts/demo/", headers=HEADERS, timeout=30
    )
    assert response.status_code == 503, response.text[:300]
    assert response.json()["error"]["code"] == "migrations_pending"


def test_mcp_says_migrations_are_pending(served_on_an_empty_database: str) -> None:
    response = httpx.post(
        f"{served_on_an_empty_database}/mcp/",
        json=LIST,
        headers={**HEADERS, "Accept": "application/json, text/event-stream"},
        timeout=30,
    )
    assert response.status_code == 503, response.text[:300]
    error = response.json()["error"]
    assert error["data"]["code"] == "migrations_pending"
    assert "manage.py migrate" in error["message"]
