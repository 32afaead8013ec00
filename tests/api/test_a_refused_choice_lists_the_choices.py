"""A value refused for not being one of a field's choices is told the choices ("live" for a
status says `one of: active, retiring, retired`), so a caller, or a model over MCP, can
correct it in one try instead of guessing."""

from __future__ import annotations

import pytest

from memory.kinds import FRAME_STATUSES
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    ("path", "params", "code"),
    [
        ("frames/", {"status": "live"}, "invalid_status"),
        ("search/", {"q": "deploy", "type": "frames"}, "invalid_type"),
    ],
)
def test_a_refused_choice_names_every_choice(
    api: Api, path: str, params: dict[str, str], code: str
) -> None:
    response = api.get(path, params)
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == code
    assert "one of: " in error["message"], error


def test_the_choices_named_are_the_fields_own(api: Api) -> None:
    message = error_of(api.get("frames/", {"status": "live"}))["message"]
    assert message.endswith("one of: " + ", ".join(FRAME_STATUSES) + "."), message
