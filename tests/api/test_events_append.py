"""POST /api/v1/contexts/{slug}/events/ : append an event (R2, R3, R8)."""

from __future__ import annotations

import json

import pytest

from memory.models import Event
from tests.api.conftest import Api, error_of


def test_append_returns_ref_and_seq_and_the_event(api: Api) -> None:
    response = api.post(
        "events/",
        {"kind": "user_message", "content": "Ship v1", "payload": {"from": "pm"}, "thread": "t-1"},
    )
    assert response.status_code == 201
    body = response.json()
    assert body["ref"] == "@e1" and body["seq"] == 1
    assert body["kind"] == "user_message"
    assert body["thread"] == "t-1"
    assert body["payload"] == {"from": "pm"}
    assert body["status"] == "active"
    assert body["request"] == "open"
    assert body["size"] == len("Ship v1")
    assert body["created"] is True


def test_delivers_marks_the_request_delivered(api: Api) -> None:
    request = api.observe("Ship v1", kind="user_message")
    reply = api.observe("Shipped", kind="agent_message", delivers=[request["ref"]])
    assert reply["delivers"] == [request["ref"]]
    assert Event.objects.get(seq=request["seq"], context__slug="alpha").request_state == "delivered"


def test_retry_with_idempotency_key_returns_the_first_event(api: Api) -> None:
    body = {"kind": "tool_result", "content": "ok", "idempotency_key": "run-1"}
    first = api.post("events/", body)
    again = api.post("events/", body)
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["ref"] == first.json()["ref"]
    assert again.json()["created"] is False
    assert Event.objects.filter(context__slug="alpha").count() == 1


def test_idempotency_key_header_works_like_the_body_field(api: Api) -> None:
    body = {"kind": "tool_result", "content": "ok"}
    first = api.post("events/", body, HTTP_IDEMPOTENCY_KEY="k-7")
    again = api.post("events/", {**body, "idempotency_key": "k-7"})
    assert again.json()["ref"] == first.json()["ref"]
    assert Event.objects.filter(context__slug="alpha").count() == 1


def test_header_and_body_keys_that_differ_are_refused(api: Api) -> None:
    response = api.post(
        "events/",
        {"kind": "tool_result", "content": "x", "idempotency_key": "a"},
        HTTP_IDEMPOTENCY_KEY="b",
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_request"


def test_key_reused_for_another_event_is_409(api: Api) -> None:
    api.post("events/", {"kind": "tool_result", "content": "a", "idempotency_key": "k"})
    response = api.post("events/", {"kind": "tool_result", "content": "b", "idempotency_key": "k"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "idempotency_key_reused"


def test_delivering_an_unknown_event_is_422(api: Api) -> None:
    response = api.post("events/", {"kind": "agent_message", "content": "x", "delivers": ["@e9"]})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "unknown_ref"
    assert error["details"] == [{"ref": "@e9"}]


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "transaction", "content": "x"},
        {"kind": "bogus", "content": "x"},
        {"content": "x"},
        {"kind": "tool_result"},
        {"kind": "tool_result", "content": 12},
        {"kind": "tool_result", "content": "x", "thread": "has space"},
        {"kind": "tool_result", "content": "x", "delivers": "@e1"},
        {"kind": "tool_result", "content": "x", "delivers": ["e1"]},
        {"kind": "tool_result", "content": "x", "colour": "red"},
        {"kind": "tool_result", "content": "x", "idempotency_key": ""},
        {"kind": "tool_result", "content": "nul\u0000byte"},
        {"kind": "tool_result", "content": "x", "payload": {"k": "nul\u0000"}},
        {"kind": "tool_result", "content": "x", "payload": {"nul\u0000key": 1}},
        ["kind", "tool_result"],
        "a string",
        None,
    ],
)
def test_malformed_bodies_are_400_and_write_nothing(api: Api, body) -> None:
    response = api.post("events/", raw=json.dumps(body))
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] in {"invalid_request", "invalid_kind", "invalid_thread"}
    assert not Event.objects.filter(context__slug="alpha").exists()


@pytest.mark.parametrize(
    "raw",
    ['{"kind": "tool_result", "content": "x"', "{'kind': 1}", "", "[" * 100_000, "NaN"],
)
def test_malformed_json_is_400_parse_error(api: Api, raw: str) -> None:
    response = api.post("events/", raw=raw)
    assert response.status_code == 400
    assert error_of(response)["code"] in {"parse_error", "invalid_request"}


def test_malformed_json_names_line_and_column(api: Api) -> None:
    response = api.post("events/", raw='{\n  "kind": "tool_result",\n  "content": x\n}')
    error = error_of(response)
    assert error["code"] == "parse_error"
    assert error["details"][0]["line"] == 3
    assert error["details"][0]["column"] == 14


@pytest.mark.parametrize(
    "payload", ['{"kind":"tool_result","content":"x","payload":1e400}', '{"a":"\\ud800"}']
)
def test_unstorable_values_are_400(api: Api, payload: str) -> None:
    response = api.post("events/", raw=payload)
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_request"


def test_huge_integers_in_the_payload_are_stored_exactly(api: Api) -> None:
    response = api.post(
        "events/",
        raw='{"kind":"tool_result","content":"x","payload":123456789012345678901234567890}',
    )
    assert response.status_code == 201
    assert response.json()["payload"] == 123456789012345678901234567890


def test_body_over_the_limit_is_413_and_writes_nothing(api: Api, settings) -> None:
    settings.MAX_REQUEST_BYTES = 2048
    response = api.post("events/", {"kind": "tool_result", "content": "x" * 4096})
    assert response.status_code == 413
    assert error_of(response)["code"] == "too_large"
    assert not Event.objects.filter(context__slug="alpha").exists()


def test_the_parser_stops_reading_at_the_limit_whatever_the_headers_say(settings) -> None:
    # Under ASGI a chunked body arrives without Content-Length: the read itself is bounded.
    import io

    from api.errors import TooLarge
    from api.parsers import StrictJSONParser

    settings.MAX_REQUEST_BYTES = 2048
    body = json.dumps({"kind": "tool_result", "content": "x" * 4096}).encode()
    with pytest.raises(TooLarge):
        StrictJSONParser().parse(io.BytesIO(body))


def test_non_json_content_type_is_415(api: Api) -> None:
    response = api.post("events/", raw="kind=tool_result", content_type="text/plain")
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


# A user message must say something: an empty or blank one (single or in a bulk append)
# is 400 naming `content`, and nothing is written, since a user message opens a request (R3).
# Other kinds may be empty (a tool can print nothing).


@pytest.mark.parametrize("content", ["", "   \n\t", "\u200b", "\ufeff\u3000\u00a0"])
def test_an_empty_user_message_is_refused(api: Api, content: str) -> None:
    response = api.post("events/", {"kind": "user_message", "content": content})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [detail["field"] for detail in error["details"]] == ["content"]
    assert not Event.objects.filter(context__slug="alpha", kind="user_message").exists()


def test_an_empty_user_message_in_a_bulk_append_writes_nothing(api: Api) -> None:
    events = [
        {"kind": "tool_result", "content": "ok"},
        {"kind": "user_message", "content": " "},
    ]
    response = api.post("events/", {"events": events})
    assert response.status_code == 400
    error = error_of(response)
    assert error["details"][0]["field"] == "events[1].content"
    assert not Event.objects.filter(context__slug="alpha").exists()


def test_an_empty_tool_result_is_kept(api: Api) -> None:
    response = api.post("events/", {"kind": "tool_result", "content": ""})
    assert response.status_code == 201
