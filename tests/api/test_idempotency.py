"""Idempotency keys (R49): a retry must be the same request in full, a bad key is named as
`idempotency_key`, and a retried reply writes once.

An idempotency key names one event: a request with the key of an earlier event but another
`payload`, other `delivers` or (for an action) other `arguments` is 409
`idempotency_key_reused` and writes nothing, single or in a bulk append; it is not answered
with the first event as if it were a retry. The same payload again (however its keys are
ordered or its numbers written) is a retry."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Evaluation, Event, TransactionRecord
from tests.api.conftest import Api, error_of


def _count() -> int:
    return Event.objects.filter(context__slug="alpha").count()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"payload": {"n": 1}}, {"payload": {"n": 2}}),
        ({"payload": None}, {"payload": {"n": 1}}),
        ({"payload": {"flag": True}}, {"payload": {"flag": 1}}),
        ({"payload": [1, 2]}, {"payload": [2, 1]}),
    ],
)
def test_another_payload_is_not_a_retry(
    api: Api, first: dict[str, Any], second: dict[str, Any]
) -> None:
    base = {"kind": "tool_result", "content": "out", "idempotency_key": "k"}
    assert api.post("events/", {**base, **first}).status_code == 201
    before = _count()
    response = api.post("events/", {**base, **second})
    assert response.status_code == 409, response.json()
    assert error_of(response)["code"] == "idempotency_key_reused"
    bulk = api.post("events/", {"events": [{**base, **second}]})
    assert bulk.status_code == 409, bulk.json()
    assert error_of(bulk)["code"] == "idempotency_key_reused"
    assert _count() == before


def test_other_delivers_are_not_a_retry(api: Api) -> None:
    one = api.observe("do a", kind="user_message")["ref"]
    two = api.observe("do b", kind="user_message")["ref"]
    base = {"kind": "agent_message", "content": "done", "idempotency_key": "reply"}
    assert api.post("events/", {**base, "delivers": [one]}).status_code == 201
    before = _count()
    response = api.post("events/", {**base, "delivers": [two]})
    assert response.status_code == 409, response.json()
    assert error_of(response)["code"] == "idempotency_key_reused"
    assert _count() == before
    assert Event.objects.get(context__slug="alpha", seq=int(two[2:])).request_state == "open"


def test_other_action_arguments_are_not_a_retry(api: Api) -> None:
    body = {"name": "deploy", "idempotency_key": "deploy-1"}
    assert api.post("actions/", {**body, "arguments": {"env": "staging"}}).status_code == 201
    response = api.post("actions/", {**body, "arguments": {"env": "prod"}})
    assert response.status_code == 409, response.json()
    assert error_of(response)["code"] == "idempotency_key_reused"
    assert Event.objects.filter(context__slug="alpha", kind="action").count() == 1


def test_the_same_payload_is_a_retry(api: Api) -> None:
    base = {"kind": "tool_result", "content": "out", "idempotency_key": "k"}
    first = api.post("events/", {**base, "payload": {"a": 1, "b": [1.5, "x"], "c": 100}})
    assert first.status_code == 201
    raw = '{"kind": "tool_result", "content": "out", "idempotency_key": "k", "payload": {"c": 1E2, "b": [1.5, "x"], "a": 1}}'
    again = api.post("events/", raw=raw)
    assert again.status_code == 200, again.json()
    assert again.json()["ref"] == first.json()["ref"]
    bulk = api.post(
        "events/", {"events": [{**base, "payload": {"c": 100, "b": [1.5, "x"], "a": 1}}]}
    )
    assert bulk.status_code == 200, bulk.json()
    action = {"name": "deploy", "arguments": {"env": "staging"}, "idempotency_key": "d"}
    assert api.post("actions/", action).status_code == 201
    assert api.post("actions/", action).status_code == 200


# A key that is not 1-200 characters (too long, or empty in the `Idempotency-Key`
# header, which the body's own check never sees) is 400 `invalid_request` whose details name
# `idempotency_key`, on every endpoint that takes one, and nothing is written.

ENDPOINTS = [
    ("events/", {"kind": "tool_result", "content": "x"}),
    ("actions/", {"name": "deploy"}),
    ("evaluations/", {}),
    ("transactions/", {"text": "(context-tx (derive goal (state open)))"}),
]


@pytest.mark.parametrize("key", ["k" * 201, ""])
@pytest.mark.parametrize(("path", "body"), ENDPOINTS)
def test_a_bad_header_key_names_the_field(
    api: Api, path: str, body: dict[str, Any], key: str
) -> None:
    response = api.post(path, body, HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == ["idempotency_key"]
    assert not Event.objects.filter(context__slug="alpha").exists()
    assert not Evaluation.objects.exists()
    assert not TransactionRecord.objects.filter(status="committed").exists()


# `POST replies/` takes an idempotency key in the body or the Idempotency-Key header: the
# same reply sent twice writes once and answers the same refs.

REPLY = {
    "text": "Shipping. (context-tx (derive ship (stage done)))",
    "tool_calls": [{"id": "c1", "name": "deploy", "arguments": {"env": "prod"}}],
}


def test_a_reply_retried_under_the_header_writes_once(api: Api) -> None:
    first = api.post("replies/", REPLY, HTTP_IDEMPOTENCY_KEY="reply-1")
    assert first.status_code == 200, first.content
    count = Event.objects.filter(context__slug="alpha").count()
    again = api.post("replies/", REPLY, HTTP_IDEMPOTENCY_KEY="reply-1")
    assert again.status_code == 200
    assert Event.objects.filter(context__slug="alpha").count() == count
    body, retried = first.json(), again.json()
    assert retried["actions"][0]["ref"] == body["actions"][0]["ref"]
    assert retried["message"]["ref"] == body["message"]["ref"]
    assert retried["transactions"][0]["ref"] == body["transactions"][0]["ref"]


def test_a_key_over_180_characters_is_refused(api: Api) -> None:
    response = api.post("replies/", {**REPLY, "idempotency_key": "k" * 181})
    assert response.status_code == 400
    assert error_of(response)["details"][0]["field"] == "idempotency_key"
    assert not Event.objects.filter(context__slug="alpha").exists()
