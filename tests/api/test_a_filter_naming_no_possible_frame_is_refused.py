"""A list filter that names a frame (`transactions/?frame=`, `relations/?subject=` and
`?object=`) is refused with 400 `invalid_frame_id` naming the field when the value cannot be
a frame id, as `frames/?source=` is. A well-formed id of no frame is 404 `not_found` for
`relations/` (as for `frames/?source=`), and an empty list for `transactions/`, whose
rejected transactions may name frames that never came to be. A blank
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


def test_a_well_formed_id_of_no_frame_lists_no_transactions(api: Api, released: Any) -> None:
    # A rejected transaction may name a frame that never came to be: the filter finds it.
    response = api.get("transactions/", {"frame": "no-such-frame"})

    assert response.status_code == 200
    assert response.json()["transactions"] == []


@pytest.mark.parametrize(("path", "field"), [("relations/", "subject"), ("relations/", "object")])
def test_a_relation_filter_naming_no_frame_is_not_found(
    api: Api, released: Any, path: str, field: str
) -> None:
    # A relation holds only frames that exist: an empty list would pass a typo silently.
    response = api.get(path, {field: "no-such-frame"})

    assert response.status_code == 404, response.json()
    error = error_of(response)
    assert error["code"] == "not_found"
    assert error["details"] == [{"field": field, "ref": "no-such-frame"}]


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
