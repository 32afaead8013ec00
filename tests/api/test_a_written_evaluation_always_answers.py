"""A written evaluation always answers 201 (or 200 on a retry) with its result, never the
response cap's 413: over the limit, `context` and then `text` are left out (null) with
`context_omitted`, `text_omitted` and the sizes, and GET evaluations/{id}/ does the same."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api

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
