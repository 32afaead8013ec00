"""The served HTTP stack's connection limits (morphz/http_protocol.py), against a real uvicorn:
half a header or a declared body never sent is closed within its deadline, an answer the
client stops reading is dropped, and a flood of connections that never send a request
cannot keep a client with a token from being served."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memory.contexts import create_context, issue_token
from memory.tx.engine import submit_transaction
from tests.served import ServedApp, served_app

LIMITS = {
    "MORPHZ_HEADER_TIMEOUT": "1",
    "MORPHZ_BODY_TIMEOUT": "1",
    "MORPHZ_SEND_TIMEOUT": "2",
    "MORPHZ_MAX_CONNECTIONS": "24",
}


@pytest.fixture
def server(transactional_db: Any, tmp_path: Any) -> Iterator[tuple[ServedApp, str]]:
    context = create_context("limits")
    token = issue_token(context).raw
    with served_app(tmp_path / "uvicorn.log", "/api/v1/", LIMITS) as app:
        yield app, token


def connect(app: ServedApp) -> socket.socket:
    host, port = app.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes `sock` (reads until EOF or reset)."""
    began = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - began


def test_stalled_connections_are_closed_within_their_deadlines(server: Any) -> None:
    """Half a header, nothing at all, a declared body never sent: each closed by the
    server within its deadline (1 s here), all at once."""
    app, token = server
    half_header = b"GET /api/v1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    no_body = (
        b"POST /api/v1/contexts/limits/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: Bearer {token}\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    )
    socks = [connect(app) for _ in range(3)]
    try:
        socks[0].sendall(half_header)
        socks[2].sendall(no_body)
        began = time.monotonic()
        for sock in socks:
            closed_after(sock)
        assert time.monotonic() - began < 5
    finally:
        for sock in socks:
            sock.close()
    flood_of_idle_connections_does_not_keep_a_token_out(app, token)


def test_an_unread_answer_is_dropped_after_the_send_timeout(server: Any) -> None:
    app, token = server
    size = 3_500_000
    body = {"t": "x" * size}
    context_id = create_context_id("limits")
    submit_transaction(context_id, data={"ops": [{"op": "derive", "id": "big", "body": body}]})
    with connect(app) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(
            b"GET /api/v1/contexts/limits/frames/big/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {token}\r\n\r\n".encode()
        )
        time.sleep(6)  # the send timeout is 2 s; the answer takes a moment to build
        received = b""
        try:
            while chunk := sock.recv(1 << 20):
                received += chunk
        except ConnectionResetError:
            pass
    head, _, content = received.partition(b"\r\n\r\n")
    declared = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    assert declared > size
    assert len(content) < declared  # dropped: the rest of the answer was never sent


def flood_of_idle_connections_does_not_keep_a_token_out(app: ServedApp, token: str) -> None:
    flood = [connect(app) for _ in range(60)]  # the server keeps 24
    try:
        answer = httpx.get(
            f"{app.url}/api/v1/contexts/limits/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert answer.status_code == 200
        time.sleep(0.5)
        still_open = 0
        for sock in flood:
            sock.setblocking(False)
            try:
                if sock.recv(1) != b"":
                    still_open += 1
            except BlockingIOError:
                still_open += 1
            except ConnectionResetError:
                pass
        assert still_open < 24
    finally:
        for sock in flood:
            sock.close()


def create_context_id(slug: str) -> int:
    from memory.models import Context

    return int(Context.objects.get(slug=slug).pk)
