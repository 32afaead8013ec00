"""The MCP endpoint reads a request body the way the REST API does: over the limit is 413
`too_large` in the API's JSON shape (never the SDK's plain text), a JSON-RPC message
with a key given twice is refused as a parse error instead of keeping the last value, and
text the database cannot store (a lone surrogate, NUL) is refused naming its field."""

from __future__ import annotations

import json
from typing import Any

import pytest

import morphz.asgi
from memory.contexts import create_context, issue_token
from tests.api.asgi_call import run_asgi


def _post(token: str, chunks: list[bytes]) -> tuple[int, Any]:
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp/",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Bearer {token}".encode()),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
        ],  # no content-length: a chunked body, counted as it arrives
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    pending = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    run_asgi(morphz.asgi.application, scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


@pytest.fixture
def token(transactional_db: Any) -> str:
    return issue_token(create_context("mcp-body")).raw


def test_a_body_over_the_limit_is_413_in_the_api_error_shape(token: str, settings: Any) -> None:
    settings.MAX_REQUEST_BYTES = 4096
    status, body = _post(token, [b"{" + b" " * 3000, b" " * 3000 + b"}"])
    assert status == 413
    assert body["error"]["code"] == "too_large"
    assert body["error"]["details"] == [{"limit_bytes": 4096}]


def test_a_message_with_a_duplicate_key_is_a_parse_error(token: str) -> None:
    raw = b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}'
    status, body = _post(token, [raw])
    assert status == 400
    assert body["error"]["code"] == -32700
    assert "'id'" in body["error"]["message"]


@pytest.mark.parametrize(
    ("text", "said"),
    [("lone \\ud800 x", "text holds a lone surrogate (U+D800)"), ("nul \\u0000", "NUL")],
)
def test_text_the_database_cannot_store_is_named_with_its_field(
    token: str, text: str, said: str
) -> None:
    # The SDK's own reader called a lone surrogate "unexpected end of hex escape".
    raw = (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"append",'
        '"arguments":{"kind":"user_message","content":"' + text + '"}}}'
    )
    status, body = _post(token, [raw.encode()])
    assert status == 400
    assert body["id"] is None and body["error"]["code"] == -32700
    message = body["error"]["message"]
    assert message.startswith("Parse error: params.arguments.content: "), message
    assert said in message and "hex escape" not in message, message
