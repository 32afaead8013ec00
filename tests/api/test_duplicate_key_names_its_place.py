"""A JSON key given twice is 400 `invalid_request` whose `details[].field` names the place
of the key in the body, in the style of every other field error (`payload.a`,
`events[1].content`, `ops[0].body.role`), not the bare key, which a client cannot find in
a nested body (`a` in `payload` or elsewhere?)."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.models import Event, TransactionRecord
from memory.strictjson import read_json
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    ("path", "raw", "field"),
    [
        ("events/", '{"kind": "tool_result", "content": "a", "content": "b"}', "content"),
        (
            "events/",
            '{"kind": "tool_result", "content": "a", "payload": {"a": 1, "a": 2}}',
            "payload.a",
        ),
        (
            "events/",
            '{"events": [{"kind": "tool_result", "content": "a"},'
            ' {"kind": "tool_result", "content": "a", "content": "b"}]}',
            "events[1].content",
        ),
        (
            "transactions/",
            '{"ops": [{"op": "derive", "id": "x", "body": {"role": "admin", "role": "viewer"}}]}',
            "ops[0].body.role",
        ),
        ("actions/", '{"name": "deploy", "arguments": {"env": "a", "env": "b"}}', "arguments.env"),
    ],
)
def test_a_duplicate_key_names_its_place(api: Api, path: str, raw: str, field: str) -> None:
    response = api.post(path, raw=raw)
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["details"] == [{"field": field, "reason": "duplicate_key"}]
    assert not Event.objects.filter(context__slug="alpha").exists()
    assert not TransactionRecord.objects.filter(context__slug="alpha").exists()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"a": {"b": [1, {"c": 1, "c": 2}]}}', "a.b[1].c"),
        # the first object to close with a duplicate is the one named
        ('{"x": 1, "y": {"z": 1, "z": 2}, "x": 2}', "y.z"),
        ('{"x": 1, "x": 2, "y": {"z": 1}}', "x"),
        ('[{"k": 1}, {"k": 1, "k": 2}]', "[1].k"),
    ],
)
def test_read_json_names_the_path(raw: str, field: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        read_json(raw)
    assert raised.value.details == [{"field": field, "reason": "duplicate_key"}]
