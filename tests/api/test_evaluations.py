"""POST /api/v1/contexts/{slug}/evaluations/ : claim pending inputs and compile (R21-R23)."""

from __future__ import annotations

from memory.models import Context, Evaluation
from tests.api.conftest import Api, error_of


def test_evaluation_claims_inputs_advances_the_tick_and_compiles(api: Api) -> None:
    event = api.observe("suite passed", kind="tool_result")
    response = api.post("evaluations/", {})
    assert response.status_code == 201
    body = response.json()
    assert body["claimed"] == [event["ref"]]
    assert body["tick"] == 1
    assert body["view_version"] == 0
    assert isinstance(body["id"], int)
    assert isinstance(body["context"], dict)
    assert "suite passed" in body["text"]


def test_retry_with_the_key_returns_the_first_result_and_changes_nothing(api: Api) -> None:
    api.observe("fact", kind="external_fact")
    made = api.post("evaluations/", {"idempotency_key": "turn-1"})
    assert made.status_code == 201
    first = made.json()
    api.observe("another fact", kind="external_fact")
    retried = api.post("evaluations/", {}, HTTP_IDEMPOTENCY_KEY="turn-1")
    assert retried.status_code == 200  # as events, actions and transactions answer a retry
    again = retried.json()
    assert again == first
    assert Context.objects.get(slug="alpha").tick == 1
    assert Evaluation.objects.filter(context__slug="alpha").count() == 1


def test_continuation_claims_nothing(api: Api) -> None:
    api.observe("fact", kind="external_fact")
    body = api.post("evaluations/", {"continuation": True}).json()
    assert body["claimed"] == []
    assert body["tick"] == 0


def test_key_reused_for_a_different_evaluation_is_409(api: Api) -> None:
    api.post("evaluations/", {"idempotency_key": "k"})
    response = api.post("evaluations/", {"idempotency_key": "k", "continuation": True})
    assert response.status_code == 409
    assert error_of(response)["code"] == "idempotency_key_reused"


def test_bad_bodies_are_400(api: Api) -> None:
    for body, code in (
        ({"thread": "bad thread"}, "invalid_thread"),
        ({"continuation": "maybe"}, "invalid_flag"),  # a boolean flag, as docs/rest.md says
        ({"extra": 1}, "invalid_request"),
    ):
        response = api.post("evaluations/", body)
        assert response.status_code == 400, body
        assert error_of(response)["code"] == code
