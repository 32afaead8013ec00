"""An empty `cursor` on any paged list is 400 `invalid_cursor` (not the first page) and is
told "This field may not be blank." (a cursor is text), never that a list may not be empty."""

from __future__ import annotations

import pytest

from memory.read import paging
from tests.api.conftest import Api, error_of

# Each paged list is declared once (memory/read/paging.py); its name is its path.
LISTS = sorted(p.name for p in vars(paging).values() if isinstance(p, paging.Paging))


@pytest.mark.parametrize("name", LISTS)
def test_an_empty_cursor_is_blank_text(api: Api, name: str) -> None:
    response = api.get(f"{name}/", {"cursor": ""})

    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_cursor"
    assert error["details"][0]["message"] == "This field may not be blank."


def test_an_empty_search_cursor_is_blank_text(api: Api) -> None:
    response = api.get("search/", {"q": "release", "cursor": ""})

    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_cursor"
    assert error["details"][0]["message"] == "This field may not be blank."
