"""Resident memory in the served path.

Measured cause: REST framework's view/request/response and Django's one-to-one caches form
reference cycles, so everything a request built (rows, data, the rendered body: about seven
times the response size at peak) stayed alive until the next full garbage collection, which
large strings do not bring closer. A server grew from 90 MB to 1.6 GB over eight GETs of a
112 MB response. The served app (morphz.asgi) now collects after large requests; these tests
run with automatic collection off, so only that collection can free the cycles."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.response import Response

from memory.contexts import create_context, issue_token
from memory.tx.engine import submit_transaction
from morphz.serving import COLLECT_ABOVE_BYTES, OneHopHTTP
from tests.api.asgi_call import run_asgi


@pytest.fixture
def no_automatic_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def scope_for(path: str, token: str, body: bytes = b"", method: str = "GET") -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Bearer {token}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


def serve_messages(
    path: str, token: str, body: bytes = b"", method: str = "GET"
) -> list[dict[str, Any]]:
    """The ASGI messages OneHopHTTP sends for one request."""
    from morphz.asgi import django_http_app

    app = OneHopHTTP(django_http_app())
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    run_asgi(app, scope_for(path, token, body, method), receive, send)
    return sent


def serve(path: str, token: str, body: bytes = b"", method: str = "GET") -> tuple[int, bytes]:
    sent = serve_messages(path, token, body, method)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def alive_responses() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, Response))


def test_a_large_response_leaves_nothing_alive_after_it_is_served(
    transactional_db: Any, no_automatic_gc: None
) -> None:
    context = create_context("big-frame", capacity_tokens=10_000_000)
    token = issue_token(context, name="agent").raw
    text = "a long build log line " * (COLLECT_ABOVE_BYTES // 20)
    ops = [{"op": "derive", "id": "big", "from": [], "body": {"log": text}}]
    submit_transaction(context.pk, data={"base_version": None, "reason": "big", "ops": ops})
    before = alive_responses()

    for _ in range(3):
        status, content = serve("/api/v1/contexts/big-frame/frames/big/", token)
        assert status == 200
        assert len(content) > COLLECT_ABOVE_BYTES

    assert alive_responses() == before


def test_a_large_request_body_leaves_nothing_alive(
    transactional_db: Any, no_automatic_gc: None
) -> None:
    context = create_context("big-append", capacity_tokens=10_000_000)
    token = issue_token(context, name="agent").raw
    body = json.dumps({"kind": "tool_result", "content": "x" * (COLLECT_ABOVE_BYTES + 10)})
    before = alive_responses()

    status, _ = serve("/api/v1/contexts/big-append/events/", token, body.encode(), "POST")

    assert status == 201
    assert alive_responses() == before
