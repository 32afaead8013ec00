"""A malformed JSON-form transaction names the failing place as `details[].field`, as every
other validation error does (docs/rest.md: `details[].field` always names each field), in
the same bracket style (`ops[1].body.goal`): a client reading `field` finds it here too."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import TransactionRecord
from tests.api.conftest import Api, error_of

DERIVE = {"op": "derive", "id": "goal", "body": {"state": "open"}}


@pytest.mark.parametrize(
    ("op", "field"),
    [
        ({"op": "bogus"}, "ops[1].op"),
        ({"op": "derive", "id": "x", "body": {"goal": 1}}, "ops[1].body.goal"),
        ({"op": "derive", "id": "x", "from": "@e1", "body": {}}, "ops[1].from"),
        ({"op": "retire", "refs": []}, "ops[1].refs"),
        ({"op": "derive", "id": "x", "body": {"": "y"}}, 'ops[1].body[""]'),
    ],
)
def test_a_json_form_error_names_its_field(api: Api, op: dict[str, Any], field: str) -> None:
    response = api.post("transactions/", {"reason": "r", "ops": [DERIVE, op]})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == [field]
    assert error["message"].startswith(f"{field}: ")
    assert not TransactionRecord.objects.filter(status="committed").exists()


def test_no_operation_names_ops(api: Api) -> None:
    response = api.post("transactions/", {"reason": "r", "ops": []})
    assert [d["field"] for d in error_of(response)["details"]] == ["ops"]
