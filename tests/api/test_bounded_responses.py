"""Every answer is bounded. Frame history comes in pages, large bodies and
texts are read on demand, evaluations drop the structured copy before growing past the
limit, anything still too large is a clear 413, and the explorer page embeds no large body."""

from __future__ import annotations

from typing import Any

from django.test import Client

from memory.contexts import create_context, issue_token
from memory.limits import INLINE_CHARS
from memory.tx.engine import submit_transaction
from morphz.serving import SEND_CHUNK, run_wsgi
from tests.api.conftest import Api, error_of
from tests.morphz.test_served_memory import scope_for, serve_messages

BIG = 4 * INLINE_CHARS


def _revise_many(api: Api, n: int) -> None:
    api.commit("(context-tx (derive notes (n 1)))")
    for i in range(2, n + 1):
        api.commit(f"(context-tx (revise notes (n {i})))")


def test_frame_history_comes_in_pages(api: Api) -> None:
    _revise_many(api, 25)
    first = api.get("frames/notes/").json()
    assert [r["revision"] for r in first["revisions"]] == list(range(6, 26))
    assert [h["revision"] for h in first["write_history"]] == list(range(6, 26))
    assert first["history"]["next_before"] == 6
    older = api.get("frames/notes/", {"history_before": 6}).json()
    assert [r["revision"] for r in older["revisions"]] == [1, 2, 3, 4, 5]
    assert older["write_history"][0]["op"] == "derive"
    assert older["history"]["next_before"] is None
    small = api.get("frames/notes/", {"history_limit": 2}).json()
    assert [r["revision"] for r in small["revisions"]] == [24, 25]
    assert api.get("frames/notes/", {"history_limit": 0}).status_code == 400


def _big_body(api: Api, revisions: int) -> list[str]:
    texts = []
    for i in range(revisions):
        text = chr(ord("a") + i) * BIG
        texts.append(text)
        op = "derive" if i == 0 else "revise"
        response = api.post(
            "transactions/", {"ops": [{"op": op, "id": "log", "body": {"t": text}}]}
        )
        assert response.status_code == 201, response.content
    return texts


def test_large_bodies_are_left_out_of_history_and_read_on_demand(api: Api) -> None:
    texts = _big_body(api, 4)
    response = api.get("frames/log/")
    assert response.status_code == 200
    # The current body in its two forms (JSON and the canonical `body_text` the explorer's
    # editor shows) and the head of each text, not every revision's body and every text.
    assert len(response.content) < 2 * BIG + 4 * INLINE_CHARS + 10_000
    data = response.json()
    assert data["body"] == {"t": texts[-1]}
    for entry in data["revisions"] + data["write_history"]:
        assert entry["body"] is None
        assert entry["body_omitted"] is True
        assert entry["body_chars"] > BIG
    for entry in data["write_history"]:
        assert entry["text_truncated"] is True
        assert len(entry["text"]) == INLINE_CHARS
    second = api.get("frames/log/revisions/2/")
    assert second.status_code == 200
    assert second.json()["body"] == {"t": texts[1]}
    assert api.get("frames/log/revisions/9/").status_code == 404


def test_transaction_lists_cut_large_texts(api: Api) -> None:
    _big_body(api, 3)
    response = api.get("transactions/")
    assert len(response.content) < 3 * (INLINE_CHARS + 2_000)
    for record in response.json()["transactions"]:
        assert record["text_truncated"] is True
        assert len(record["text"]) == INLINE_CHARS
        assert record["ops"] is None
        assert record["ops_omitted"] is True
    api.commit("(context-tx (derive small (a b)))")
    last = api.get("transactions/").json()["transactions"][-1]
    assert last["text_truncated"] is False
    assert last["ops_omitted"] is False
    assert last["ops"][0]["id"] == "small"


def test_an_evaluation_over_the_limit_sends_the_text_alone(api: Api, settings: Any) -> None:
    for name, letter in (("first", "x"), ("second", "y")):
        ops = [{"op": "derive", "id": name, "body": {"t": letter * 50_000}}]
        assert api.post("transactions/", {"ops": ops}).status_code == 201
    settings.MAX_RESPONSE_BYTES = 150_000
    response = api.post("evaluations/", {})
    assert response.status_code == 201
    data = response.json()
    assert data["context_omitted"] is True
    assert data["context"] is None
    assert "x" * 50_000 in data["text"]
    assert "y" * 50_000 in data["text"]
    assert len(response.content) <= settings.MAX_RESPONSE_BYTES


def test_an_answer_over_the_limit_is_a_clear_413(api: Api, settings: Any) -> None:
    _big_body(api, 1)
    settings.MAX_RESPONSE_BYTES = 50_000
    response = api.get("frames/log/")
    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "too_large"
    assert error["details"][0]["limit_bytes"] == 50_000


def test_the_explorer_page_embeds_no_large_body(api: Api, staff: Any) -> None:
    texts = _big_body(api, 3)
    api.post("transactions/", {"text": "(context-tx (derive other (a b)))"})
    client = Client()
    client.force_login(staff)
    page = client.get("/contexts/alpha/")
    assert page.status_code == 200
    html = page.content.decode()
    assert len(html) < BIG
    assert texts[-1][:5000] not in html
    assert "select the frame to load it" in html


# A large answer leaves the worker thread as a temporary file and reaches the connection in
# SEND_CHUNK pieces, each sent only when the connection takes it (uvicorn's flow control): a
# client that stops reading holds a piece, not the answer (issue 35: 60 unread 16 MB diffs
# took a server from 190 MB to 1.2 GB).


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
