"""`POST replies/` takes an idempotency key in the body or the Idempotency-Key header: the
same reply sent twice writes once and answers the same refs."""

from __future__ import annotations

from memory.models import Event
from tests.api.conftest import Api, error_of

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
