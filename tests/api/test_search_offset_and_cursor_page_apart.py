"""GET search/ pages by `offset` or by `cursor`, never both: an `offset` of any value, 0
included, sent with a `cursor` is 400 `invalid_offset` (whether it was sent decides, not its
value), and a cursor's page goes on by `next_cursor` alone (docs/search.md)."""

from __future__ import annotations

import pytest

from memory.search.indexer import drain
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize("offset", ["0", "5"])
def test_an_offset_sent_with_a_cursor_is_invalid_offset(api: Api, offset: str) -> None:
    for n in range(4):
        api.observe(f"invoice {n} paid", kind="agent_message")
    drain()
    cursor = api.get("search/", {"q": "invoice", "limit": 1}).json()["next_cursor"]
    assert cursor is not None
    alone = api.get("search/", {"q": "invoice", "limit": 1, "cursor": cursor})
    assert alone.status_code == 200, alone.content
    both = api.get("search/", {"q": "invoice", "limit": 1, "cursor": cursor, "offset": offset})
    assert both.status_code == 400, both.content
    error = error_of(both)
    assert error["code"] == "invalid_offset"
    assert error["details"] == [{"field": "offset"}, {"field": "cursor"}]


def test_a_cursor_page_leaves_next_offset_to_offset_paging(api: Api) -> None:
    """Cursor pages go on with `next_cursor` alone: `next_offset` is null on them."""
    for n in range(4):
        api.observe(f"invoice {n} paid", kind="agent_message")
    drain()
    first = api.get("search/", {"q": "invoice", "limit": 1}).json()
    assert first["next_offset"] == 1
    page = api.get("search/", {"q": "invoice", "limit": 1, "cursor": first["next_cursor"]})
    assert page.json()["next_offset"] is None
    assert page.json()["next_cursor"] is not None
