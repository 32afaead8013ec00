"""A frozen context still answers an idempotent retry with its first result (it writes
nothing, R49, R54): an agent whose first answer was lost learns its write happened. Any
write that is not such a retry is refused with 409 `context_frozen`, as before."""

from __future__ import annotations

from typing import Any

from memory.models import Evaluation, Event, TransactionRecord
from tests.api.conftest import Api, error_of


def freeze(api: Api) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": true}', "application/json")
    assert response.status_code == 200


def same_result(key: str, again: dict[str, Any], first: dict[str, Any]) -> bool:
    """The retry names what the first request wrote (an event's state may have moved since:
    an evaluation claimed it; a receipt or an evaluation's result is the same whole)."""
    if key == "events/":
        return again["ref"] == first["ref"] and again["created"] is False
    if key == "bulk":
        return [e["ref"] for e in again["events"]] == [e["ref"] for e in first["events"]]
    return again == first


def test_retries_are_answered_and_new_writes_refused(api: Api, released: dict[str, Any]) -> None:
    event = {"kind": "tool_result", "content": "a", "idempotency_key": "ev"}
    batch = {"events": [{"kind": "tool_result", "content": "b", "idempotency_key": "bk"}]}
    tx = {"text": "(context-tx (derive later (a b)))", "idempotency_key": "tx"}
    evaluation = {"idempotency_key": "eval"}
    first = {
        "events/": api.post("events/", event).json(),
        "bulk": api.post("events/", batch).json(),
        "transactions/": api.post("transactions/", tx).json(),
        "evaluations/": api.post("evaluations/", evaluation).json(),
    }
    freeze(api)
    counts = (Event.objects.count(), TransactionRecord.objects.count(), Evaluation.objects.count())
    for path, body, key in (
        ("events/", event, "events/"),
        ("events/", batch, "bulk"),
        ("transactions/", tx, "transactions/"),
        ("evaluations/", evaluation, "evaluations/"),
    ):
        again = api.post(path, body)
        assert again.status_code == 200, (path, again.json())
        assert same_result(key, again.json(), first[key]), (key, again.json(), first[key])
    new_writes = (
        ("events/", {"kind": "tool_result", "content": "new", "idempotency_key": "ev2"}),
        ("events/", {"events": [{"kind": "tool_result", "content": "new"}]}),
        ("transactions/", {"text": "(context-tx (derive newer (a b)))", "idempotency_key": "t2"}),
        ("evaluations/", {"idempotency_key": "eval2"}),
    )
    for path, body in new_writes:
        assert error_of(api.post(path, body))["code"] == "context_frozen", (path, body)
    assert (
        Event.objects.count(),
        TransactionRecord.objects.count(),
        Evaluation.objects.count(),
    ) == counts
