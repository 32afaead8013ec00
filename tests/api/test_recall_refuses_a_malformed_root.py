"""POST recall/ with a `frame_id` that is neither a frame id nor an event ref is 400 naming
the field, not 404: `invalid_ref` when shaped like an event ref, `invalid_frame_id`
otherwise; `e1` is a frame id, so a missing one is 404."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, error_of

MALFORMED = [
    ("@e0", "invalid_ref"),
    ("@E1", "invalid_ref"),
    ("@e01", "invalid_ref"),
    ("@e99999999999999999999", "invalid_ref"),
    ("@e+3", "invalid_ref"),
    ("bad id", "invalid_frame_id"),
    ("Release", "invalid_frame_id"),
]


@pytest.mark.parametrize(("root", "code"), MALFORMED)
def test_a_malformed_root_is_400_naming_the_field(
    api: Api, released: Any, root: str, code: str
) -> None:
    response = api.post("recall/", {"frame_id": root})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == code
    assert error["details"][0]["field"] == "frame_id"


def test_a_frame_id_that_looks_like_a_bare_ref_is_looked_up(api: Api, released: Any) -> None:
    response = api.post("recall/", {"frame_id": "e1"})
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
