"""A request body nested deeper than 64 levels is one clear 400 `invalid_request` ("JSON
nests deeper than 64 levels"), however deep: past Python's recursion limit too, never a
`parse_error` quoting the interpreter. Nothing is written."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.api.conftest import Api, error_of


def _nested_lists(levels: int) -> str:
    return "[" * levels + "]" * levels


def _nested_objects(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [200, 1000, 100_000])
@pytest.mark.parametrize("nest", [_nested_lists, _nested_objects])
def test_a_body_nested_too_deep_is_a_clear_invalid_request(
    api: Api, levels: int, nest: Callable[[int], str]
) -> None:
    payload = nest(levels)
    raw = '{"kind": "tool_result", "content": "x", "payload": ' + payload + "}"
    response = api.post("events/", raw=raw)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["message"] == "JSON nests deeper than 64 levels"
    assert error["details"] == [{"max_depth": 64}]
    assert "recursion" not in response.content.decode()
    assert api.get("events/").json()["events"] == []
