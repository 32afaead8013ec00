"""The served HTTP path (morphz.serving.OneHopHTTP, as morphz.asgi mounts it): real ASGI
messages in, Django's request cycle on a worker thread, the same answers as the test client.

Requests run on executor threads with their own database connections, so these tests use
transactional_db (the data must be committed for those threads to see it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.wsgi import get_wsgi_application

from memory.contexts import create_context, issue_token
from memory.models import Event
from morphz.serving import OneHopHTTP


@pytest.fixture
def served(transactional_db: Any) -> dict[str, Any]:
    context = create_context("served", capacity_tokens=50_000)
    return {"context": context, "token": issue_token(context, name="agent").raw}


def call(
    method: str,
    path: str,
    chunks: list[bytes],
    headers: list[tuple[bytes, bytes]],
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One request through OneHopHTTP; the body arrives in `chunks` (more_body between)."""
    app = OneHopHTTP(get_wsgi_application())
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    incoming = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks or [b""])
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async_to_sync(app)(scope, receive, send)
    start, body = sent
    assert start["type"] == "http.response.start"
    return start["status"], dict(start["headers"]), body["body"]


def bearer(token: str) -> tuple[bytes, bytes]:
    return (b"authorization", f"Bearer {token}".encode())


def test_an_append_answers_201_with_the_event_and_stores_it(served: dict[str, Any]) -> None:
    body = json.dumps({"kind": "tool_result", "content": "suite: 12 passed"}).encode()
    status, headers, content = call(
        "POST",
        "/api/v1/contexts/served/events/",
        [body],
        [
            bearer(served["token"]),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    )
    assert status == 201, content
    assert headers[b"content-type"] == b"application/json"
    event = json.loads(content)
    assert event["ref"] == "@e1"
    assert Event.objects.get(context=served["context"], seq=1).content == "suite: 12 passed"


def test_a_chunked_body_without_content_length_is_read_whole(served: dict[str, Any]) -> None:
    body = json.dumps({"kind": "user_message", "content": "ship it " * 50}).encode()
    status, _, content = call(
        "POST",
        "/api/v1/contexts/served/events/",
        [body[:10], body[10:100], body[100:]],
        [bearer(served["token"]), (b"content-type", b"application/json")],
    )
    assert status == 201, content
    assert Event.objects.get(context=served["context"]).content == "ship it " * 50


def test_a_chunked_body_over_the_limit_is_413_and_writes_nothing(
    served: dict[str, Any], settings: Any
) -> None:
    settings.MAX_REQUEST_BYTES = 2048
    body = json.dumps({"kind": "tool_result", "content": "x" * 5000}).encode()
    status, _, content = call(
        "POST",
        "/api/v1/contexts/served/events/",
        [body[:1000], body[1000:]],
        [bearer(served["token"]), (b"content-type", b"application/json")],
    )
    assert status == 413
    assert json.loads(content)["error"]["code"] == "too_large"
    assert not Event.objects.filter(context=served["context"]).exists()


def test_a_read_without_a_token_is_401_in_the_error_shape(served: dict[str, Any]) -> None:
    status, _, content = call("GET", "/api/v1/contexts/served/", [], [])
    assert status == 401
    assert json.loads(content)["error"]["code"] == "not_authenticated"
