"""GET search/?cursor=: the next page of the same query; a made-up, empty or foreign cursor
is 400 `invalid_cursor`, an offset beside a cursor 400 `invalid_offset` (issue 30)."""

from __future__ import annotations

from memory.search.indexer import drain
from tests.api.conftest import Api, error_of


def test_search_pages_with_next_cursor_and_refuses_a_foreign_one(api: Api) -> None:
    for i in range(5):
        api.observe(f"heron note {i} egret", kind="agent_message")
    drain()
    first = api.get("search/", {"q": "heron", "limit": 2}).json()
    seen = [hit["ref"] for hit in first["hits"]]
    cursor = first["next_cursor"]
    api.observe("heron", kind="agent_message")  # arrives between pages
    drain()
    while cursor is not None:
        page = api.get("search/", {"q": "heron", "limit": 2, "cursor": cursor}).json()
        seen += [hit["ref"] for hit in page["hits"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == 5

    for params, reason in (
        ({"q": "egret", "cursor": first["next_cursor"]}, "other_query"),
        ({"q": "heron", "cursor": first["next_cursor"][:-3] + "abc"}, "bad_signature"),
    ):
        response = api.get("search/", params)
        assert response.status_code == 400
        assert error_of(response)["code"] == "invalid_cursor"
        assert error_of(response)["details"] == [{"field": "cursor", "reason": reason}]
    for bad in ("", "x" * 5000, "abc\x00def"):
        refused = error_of(api.get("search/", {"q": "heron", "cursor": bad}))
        assert refused["code"] == "invalid_cursor"
        assert [(d["field"], d["reason"]) for d in refused["details"]] == [("cursor", "malformed")]
        assert "elements" not in refused["message"]
    both = api.get("search/", {"q": "heron", "offset": 2, "cursor": first["next_cursor"]})
    assert error_of(both)["code"] == "invalid_offset"
