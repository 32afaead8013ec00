"""R49: a retried transaction returns its first receipt and writes nothing;
the same key with another request is 409 `idempotency_key_reused`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory.contexts import create_context, issue_token
from memory.models import Context, Event, TransactionRecord
from tests.api.conftest import Api, error_of
from tests.api.live import unthrottled  # noqa: F401

TX = "(context-tx (derive release (goal v1)))"


def _state(slug: str) -> tuple[int, int, int]:
    context = Context.objects.get(slug=slug)
    return (
        context.version,
        context.last_seq,
        TransactionRecord.objects.filter(context=context).count(),
    )


def test_a_retry_returns_the_first_receipt_and_writes_nothing(api: Api) -> None:
    first = api.post("transactions/", {"text": TX, "idempotency_key": "turn-7"})
    assert first.status_code == 201, first.content
    before = _state("alpha")
    retry = api.post("transactions/", {"text": TX, "idempotency_key": "turn-7"})
    assert retry.status_code == 200, retry.content
    assert retry.json() == first.json()
    assert _state("alpha") == before


def test_a_retry_after_other_commits_is_not_a_conflict(api: Api) -> None:
    body = {"text": "(context-tx (base-version 0) (derive a (n 1)))", "idempotency_key": "k"}
    first = api.post("transactions/", body).json()
    api.commit("(context-tx (revise a (n 2)))")
    retry = api.post("transactions/", body)
    assert retry.status_code == 200
    assert retry.json() == first
    assert api.get("frames/a/").json()["body"] == {"n": "2"}


def test_the_json_form_and_the_header_carry_the_key_too(api: Api) -> None:
    body = {"ops": [{"op": "derive", "id": "x", "body": {"a": "1"}}], "reason": "r"}
    first = api.post("transactions/", body, HTTP_IDEMPOTENCY_KEY="h-1")
    assert first.status_code == 201, first.content
    again = api.post("transactions/", {**body, "idempotency_key": "h-1"})
    assert again.status_code == 200
    assert again.json()["transaction"] == first.json()["transaction"]


@pytest.mark.parametrize(
    "other",
    [
        {"text": "(context-tx (derive release (goal v2)))"},
        {"text": TX, "thread": "side"},
        {"ops": [{"op": "derive", "id": "release", "body": {"goal": "v1"}}]},
    ],
)
def test_the_same_key_with_another_request_is_409(api: Api, other: dict[str, Any]) -> None:
    api.post("transactions/", {"text": TX, "idempotency_key": "turn-8"})
    before = _state("alpha")
    response = api.post("transactions/", {**other, "idempotency_key": "turn-8"})
    assert response.status_code == 409, response.content
    error = error_of(response)
    assert error["code"] == "idempotency_key_reused"
    version, seq, _records = _state("alpha")
    assert (version, seq) == before[:2]
    assert TransactionRecord.objects.filter(context__slug="alpha", status="committed").count() == 1


def test_a_rejected_submission_does_not_hold_its_key(api: Api) -> None:
    refused = api.post(
        "transactions/", {"text": "(context-tx (revise nothing (a 1)))", "idempotency_key": "k2"}
    )
    assert refused.status_code == 422
    api.commit("(context-tx (derive nothing (a 0)))")
    again = api.post(
        "transactions/", {"text": "(context-tx (revise nothing (a 1)))", "idempotency_key": "k2"}
    )
    assert again.status_code == 201


def test_keys_belong_to_one_context(api: Api, beta_token: str) -> None:
    other = Api("beta", beta_token)
    assert api.post("transactions/", {"text": TX, "idempotency_key": "same"}).status_code == 201
    assert other.post("transactions/", {"text": TX, "idempotency_key": "same"}).status_code == 201


def test_a_bad_key_is_400(api: Api) -> None:
    for key in ("", "k" * 201, 7):
        response = api.post("transactions/", {"text": TX, "idempotency_key": key})
        assert response.status_code == 400, key
    assert not Event.objects.filter(context__slug="alpha").exists()


class DropFirstResponse(httpx.BaseTransport):
    """The network between client and server: the first answer is lost after the server
    handled the request (the case where the agent cannot know whether it committed)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.dropped = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and not self.dropped:
            response.read()
            self.dropped += 1
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


@pytest.mark.usefixtures("unthrottled")
def test_the_client_retries_a_keyed_submission_after_a_dropped_answer(
    live_server: Any, transactional_db: Any
) -> None:
    from morphz_client import MorphzClient

    context = create_context("retry-ctx")
    transport = DropFirstResponse()
    http = httpx.Client(base_url=live_server.url, transport=transport)
    client = MorphzClient(
        live_server.url, issue_token(context).raw, context="retry-ctx", http=http, retry_wait=0.01
    )
    receipt = client.submit(TX, idempotency_key="once")
    assert transport.dropped == 1
    assert receipt["version"] == 1
    context.refresh_from_db()
    assert context.version == 1
    assert TransactionRecord.objects.filter(context=context, status="committed").count() == 1
