"""A large answer leaves the worker thread as a temporary file and reaches the connection in
SEND_CHUNK pieces, each sent only when the connection takes it (uvicorn's flow control): a
client that stops reading holds a piece, not the answer (issue 35: 60 unread 16 MB diffs
took a server from 190 MB to 1.2 GB)."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context, issue_token
from memory.tx.engine import submit_transaction
from morphz.serving import SEND_CHUNK, run_wsgi
from tests.morphz.test_served_memory import scope_for, serve_messages


def test_a_large_answer_is_sent_in_pieces_no_larger_than_the_chunk(transactional_db: Any) -> None:
    context = create_context("pieces")
    token = issue_token(context).raw
    text = "x" * 2_000_000
    submit_transaction(
        context.pk, data={"ops": [{"op": "derive", "id": "big", "body": {"t": text}}]}
    )
    messages = serve_messages("/api/v1/contexts/pieces/frames/big/", token)
    bodies = [m for m in messages if m["type"] == "http.response.body"]
    assert len(bodies) > 2_000_000 // SEND_CHUNK
    assert all(len(m["body"]) <= SEND_CHUNK for m in bodies)
    assert [m["more_body"] for m in bodies] == [True] * (len(bodies) - 1) + [False]
    assert sum(len(m["body"]) for m in bodies) > len(text)


def test_the_worker_hands_over_a_large_answer_as_a_file_on_disk(transactional_db: Any) -> None:
    from io import BytesIO

    from morphz.asgi import django_http_app
    from morphz.serving import wsgi_environ

    context = create_context("spooled")
    token = issue_token(context).raw
    submit_transaction(
        context.pk, data={"ops": [{"op": "derive", "id": "big", "body": {"t": "y" * 1_000_000}}]}
    )
    environ = wsgi_environ(scope_for("/api/v1/contexts/spooled/frames/big/", token), BytesIO())
    environ["CONTENT_LENGTH"] = "0"
    status, _headers, body, size = run_wsgi(django_http_app(), environ)
    with body:
        assert status == 200 and size > 1_000_000
        assert body._rolled  # type: ignore[attr-defined]  # on disk, not in memory
        assert len(body.read()) == size
