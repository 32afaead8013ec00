"""A fork whose answer was lost, retried under the same idempotency key, gets the same fork
and the same token (issue 35: the retry got `context_exists` and the token was lost); the
key with other arguments, or presented by another caller, is 409 `idempotency_key_reused`,
and the token is stored only sealed with the caller's own credential."""

from __future__ import annotations

from typing import Any

from memory.contexts import issue_token
from memory.models import Context, ForkReceipt
from tests.api.conftest import Api, error_of


def test_a_retried_fork_gets_the_same_fork_and_token(api: Api) -> None:
    api.commit("(context-tx (derive note (a b)))")
    body = {"slug": "alpha-copy", "idempotency_key": "fork-1"}
    first = api.post("forks/", body)
    assert first.status_code == 201, first.json()
    again = api.post("forks/", body)
    assert again.status_code == 201, again.json()
    assert again.json()["slug"] == first.json()["slug"] == "alpha-copy"
    assert again.json()["token"] == first.json()["token"]
    assert Context.objects.filter(slug="alpha-copy").count() == 1
    copy = Api("alpha-copy", again.json()["token"])
    assert copy.get("").status_code == 200


def test_a_retry_without_a_slug_gets_the_same_generated_fork(api: Api) -> None:
    first = api.post("forks/", {}, HTTP_IDEMPOTENCY_KEY="no-slug")
    again = api.post("forks/", {}, HTTP_IDEMPOTENCY_KEY="no-slug")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()


def test_the_key_with_other_arguments_is_refused(api: Api) -> None:
    assert api.post("forks/", {"slug": "one", "idempotency_key": "k"}).status_code == 201
    refused = api.post("forks/", {"slug": "two", "idempotency_key": "k"})
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "idempotency_key_reused"
    assert not Context.objects.filter(slug="two").exists()


def test_another_caller_with_the_same_key_gets_no_token(api: Api, alpha: Any) -> None:
    assert api.post("forks/", {"slug": "mine", "idempotency_key": "k2"}).status_code == 201
    other = Api("alpha", issue_token(alpha).raw)
    refused = other.post("forks/", {"slug": "mine", "idempotency_key": "k2"})
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "idempotency_key_reused"
    assert "token" not in refused.json()


def test_the_token_is_not_stored_in_the_clear(api: Api) -> None:
    answer = api.post("forks/", {"slug": "sealed", "idempotency_key": "k3"}).json()
    receipt = ForkReceipt.objects.get(key="k3")
    assert answer["token"].encode() not in bytes(receipt.sealed_token)
    assert len(bytes(receipt.sealed_token)) == len(answer["token"])
