"""Edges of the HTTP stack: a Content-Length over the limit is
refused from the header before any body is read; a Host header the server does not answer
for gets the API's JSON error shape on /api/."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

import morphz.asgi
from tests.api.asgi_call import run_asgi


def test_a_huge_content_length_is_refused_before_the_body_is_read(settings: Any) -> None:
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/contexts/any/events/",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", b"99999999999"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    reads: list[int] = []
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        reads.append(1)  # the body would arrive here; a client declaring 100 GB never ends it
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    run_asgi(morphz.asgi.application, scope, receive, send)

    assert reads == []
    start, body = sent
    assert start["status"] == 413
    assert (b"connection", b"close") in start["headers"]
    error = json.loads(body["body"])["error"]
    assert error["code"] == "too_large"
    assert error["details"] == [{"limit_bytes": settings.MAX_REQUEST_BYTES}]


def test_a_bad_host_on_the_api_answers_the_json_error_shape(db: Any) -> None:
    response = Client(HTTP_HOST="evil.example").get("/api/v1/")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "invalid_host"
    assert "evil.example" in error["message"]


def test_a_bad_host_elsewhere_keeps_djangos_answer(db: Any) -> None:
    response = Client(HTTP_HOST="evil.example").get("/admin/login/")

    assert response.status_code == 400
    assert not response["Content-Type"].startswith("application/json")
