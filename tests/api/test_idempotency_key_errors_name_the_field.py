"""A key that is not 1-200 characters (too long, or empty in the `Idempotency-Key`
header, which the body's own check never sees) is 400 `invalid_request` whose details name
`idempotency_key`, on every endpoint that takes one, and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Evaluation, Event, TransactionRecord
from tests.api.conftest import Api, error_of

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
