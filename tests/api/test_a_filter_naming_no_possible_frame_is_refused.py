"""A list filter that names a frame (`transactions/?frame=`, `relations/?subject=` and
`?object=`) is refused with 400 `invalid_frame_id` naming the field when the value cannot be
a frame id, as `frames/?source=` is; a well-formed id of no frame is an empty list. A blank
one, `frames/?source=` too, names no frame either and answers the same code, as a blank
`recall/` `frame_id` and every other blank filter with a code of its own do."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    ("path", "field"),
    [("transactions/", "frame"), ("relations/", "subject"), ("relations/", "object")],
)
@pytest.mark.parametrize("value", ["BAD", "@e1", "has space", "-dash-first"])
def test_a_filter_that_cannot_name_a_frame_is_refused(
    api: Api, released: Any, path: str, field: str, value: str
) -> None:
    response = api.get(path, {field: value})

    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_frame_id"
    assert error["details"][0]["field"] == field


@pytest.mark.parametrize(
    ("path", "field"),
    [("transactions/", "frame"), ("relations/", "subject"), ("relations/", "object")],
)
def test_a_well_formed_id_of_no_frame_lists_nothing(
    api: Api, released: Any, path: str, field: str
) -> None:
    response = api.get(path, {field: "no-such-frame"})

    assert response.status_code == 200
    assert next(v for k, v in response.json().items() if isinstance(v, list)) == []


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("transactions/", "frame"),
        ("relations/", "subject"),
        ("relations/", "object"),
        ("frames/", "source"),
    ],
)
def test_a_blank_filter_naming_a_frame_is_refused_with_its_own_code(
    api: Api, released: Any, path: str, field: str
) -> None:
    response = api.get(path, {field: ""})

    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_frame_id"
    assert error["details"][0] == {"field": field, "message": "This field may not be blank."}
