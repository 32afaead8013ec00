"""A body edit (`POST frames/{id}/body/`) that fails names what the client sent: the body's
problems are in `text` (the place inside it in the message), a frame id that cannot be one
is `invalid_frame_id` naming `frame_id`; never `ops[0].body.x` or `ops[0].id`, fields of a
transaction the client never wrote. Nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Frame, TransactionRecord
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    ("form", "text", "in_message"),
    [
        ("json", '{"goal": 1}', "goal: "),
        ("json", '{"goal": {"stage": [null]}}', "goal.stage[0]: "),
        ("json", '{"from": "x"}', "from: "),
        ("json", '{"": "x"}', "a field name cannot be empty"),
        ("json", '{"goal": "a", "goal": "b"}', "'goal' twice"),
        ("json", "[1]", "JSON object"),
        ("fields", "(from x) (goal y)", "from"),
    ],
)
def test_a_bad_body_names_text(
    api: Api, released: dict[str, Any], form: str, text: str, in_message: str
) -> None:
    before = TransactionRecord.objects.count()
    response = api.post("frames/release/body/", {"form": form, "text": text})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] in ("invalid_request", "parse_error")
    assert [d.get("field") for d in error["details"]] == ["text"], error
    assert "ops[0]" not in error["message"]
    assert in_message in error["message"]
    assert Frame.objects.get(context__slug=api.slug, frame_id="release").revision == 1
    assert TransactionRecord.objects.count() == before


def test_a_frame_id_that_cannot_be_one_is_invalid_frame_id(api: Api) -> None:
    response = api.post("frames/Release/body/", {"form": "fields", "text": "(goal y)"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_frame_id"
    assert [d["field"] for d in error["details"]] == ["frame_id"]
    assert "ops[0]" not in error["message"]
    assert not TransactionRecord.objects.exists()
