"""A request whose URL is longer than the HTTP parser can take (65,535 bytes) is answered
413 `too_large` in the API's JSON error shape by the real server, like any other error; a
URL just within it reaches Django and gets the field's own JSON error."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from morphz.http_protocol import URL_MAX_BYTES
from tests.served import ServedApp, served_app


@pytest.fixture
def server(transactional_db: Any, tmp_path: Any) -> Iterator[tuple[ServedApp, str]]:
    token = issue_token(create_context("long-urls")).raw
    with served_app(tmp_path / "uvicorn.log", "/api/v1/") as app:
        yield app, token


def answer(app: ServedApp, target: str, token: str) -> tuple[str, dict[str, str], bytes]:
    """The status line, headers and body the server answers a GET of `target` with, sent
    over a plain socket (an HTTP client library may refuse such a URL itself)."""
    host, port = app.url.removeprefix("http://").split(":")
    request = (
        f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        "Connection: close\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request.encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines)
    return status, headers, body


def search_target(length: int) -> str:
    """A search URL exactly `length` bytes long."""
    path = "/api/v1/contexts/long-urls/search/?q="
    return path + "a" * (length - len(path))


@pytest.mark.parametrize("length", [URL_MAX_BYTES + 1, 70_000, 1_000_000])
def test_a_url_over_the_parser_limit_is_413_too_large_in_json(server: Any, length: int) -> None:
    app, token = server
    status, headers, body = answer(app, search_target(length), token)
    assert status.split(" ")[1] == "413", (status, body[:200])
    assert headers["content-type"] == "application/json"
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == "too_large"
    assert error["details"] == [{"limit_bytes": URL_MAX_BYTES, "part": "url"}]
    assert "URL" in error["message"]


def test_a_url_at_the_parser_limit_reaches_django(server: Any) -> None:
    app, token = server
    status, headers, body = answer(app, search_target(URL_MAX_BYTES), token)
    assert status.split(" ")[1] == "400", (status, body[:200])
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["error"]["code"] == "invalid_query"
