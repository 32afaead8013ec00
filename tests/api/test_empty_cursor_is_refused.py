"""An empty `cursor` in a list's query string is 400 `invalid_cursor`, as an empty value
of every other parameter is refused (and as recall's empty `cursor` is): it is not silently
read as "no cursor", which would restart the listing from its first page."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    "path", ["events/", "transactions/", "frames/", "relations/", "evaluations/"]
)
def test_an_empty_cursor_is_refused(api: Api, path: str) -> None:
    response = api.get(path, {"cursor": ""})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_cursor"
    assert [d["field"] for d in error["details"]] == ["cursor"]


def test_an_empty_recall_cursor_is_refused(api: Api) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    response = api.post("recall/", {"frame_id": "goal", "cursor": ""})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"
