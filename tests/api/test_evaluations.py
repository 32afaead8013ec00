"""POST /api/v1/contexts/{slug}/evaluations/ : claim pending inputs and compile (R21-R23)."""

from __future__ import annotations

from typing import Any

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


# A written evaluation always answers 201 (or 200 on a retry) with its result, never the
# response cap's 413: over the limit, `context` and then `text` are left out (null) with
# `context_omitted`, `text_omitted` and the sizes, and GET evaluations/{id}/ does the same.

BODY_CHARS = 50_000
FRAMES = 6
LIMIT = 200_000  # over one frame's body, under the six of them


def _large_memory(api: Api) -> None:
    for i in range(FRAMES):
        ops = [{"op": "derive", "id": f"big-{i}", "body": {"a": "q" * BODY_CHARS}}]
        response = api.post("transactions/", {"ops": ops})
        assert response.status_code == 201, response.content


def _assert_text_left_out(answer: dict[str, Any], size: int) -> None:
    assert answer["context"] is None and answer["context_omitted"] is True
    assert answer["text"] is None and answer["text_omitted"] is True
    assert answer["limit_bytes"] == LIMIT
    assert answer["answer_bytes"] > FRAMES * BODY_CHARS * 2
    assert answer["text_chars"] > FRAMES * BODY_CHARS
    assert size <= LIMIT


def test_an_evaluation_too_large_to_send_answers_without_its_text(api: Api, settings: Any) -> None:
    _large_memory(api)
    request = api.observe("what is in memory?", kind="user_message")
    settings.MAX_RESPONSE_BYTES = LIMIT
    first = api.post("evaluations/", {"idempotency_key": "turn-1"})
    assert first.status_code == 201, first.content[:500]
    written = first.json()
    _assert_text_left_out(written, len(first.content))
    assert written["claimed"] == [request["ref"]]
    assert written["advanced_tick"] is True

    retry = api.post("evaluations/", {"idempotency_key": "turn-1"})
    assert retry.status_code == 200, retry.content[:500]
    assert retry.json() == written

    read = api.get(f"evaluations/{written['id']}/")
    assert read.status_code == 200, read.content[:500]
    _assert_text_left_out(read.json()["input"], len(read.content))


def test_an_evaluation_within_the_limit_says_nothing_was_left_out(api: Api) -> None:
    api.commit("(context-tx (derive small (a b)))")
    answer = api.post("evaluations/", {}).json()
    assert answer["context_omitted"] is False and answer["text_omitted"] is False
    assert "[frame small" in answer["text"]
    read = api.get(f"evaluations/{answer['id']}/").json()["input"]
    assert read["context_omitted"] is False and read["text_omitted"] is False
    assert read["text"] == answer["text"]
