"""GET /api/v1/contexts/{slug}/transactions/ : history, filter `frame` (R6, R32)."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


def test_history_lists_text_versions_author_and_receipt(api: Api, released) -> None:
    api.post("transactions/", {"text": "(context-tx (derive release (x y)))"})  # rejected
    body = api.get("transactions/").json()
    items = body["transactions"]
    assert [t["status"] for t in items] == ["committed", "committed", "rejected"]
    first = items[0]
    assert first["text"].startswith("(context-tx")
    assert first["base_version"] == 0 and first["committed_version"] == 1
    assert first["author_kind"] == "agent"
    assert first["receipt"]["version"] == 1
    assert first["ref"].startswith("@e")
    assert items[2]["committed_version"] is None
    assert items[2]["errors"]["code"] == "frame_exists"


def test_filter_by_frame_and_status(api: Api, released) -> None:
    api.commit("(context-tx (derive other (a b)))")
    touching = api.get("transactions/", {"frame": "test-result"}).json()["transactions"]
    assert [t["committed_version"] for t in touching] == [2]
    release = api.get("transactions/", {"frame": "release"}).json()["transactions"]
    assert [t["committed_version"] for t in release] == [1, 2]
    assert api.get("transactions/", {"status": "rejected"}).json()["transactions"] == []


def test_paging_with_cursor(api: Api, released) -> None:
    page = api.get("transactions/", {"limit": 1}).json()
    assert len(page["transactions"]) == 1
    rest = api.get("transactions/", {"limit": 1, "cursor": page["next_cursor"]}).json()
    assert rest["transactions"][0]["committed_version"] == 2
    assert rest["next_cursor"] is None


def test_bad_filters_are_400(api: Api) -> None:
    for params, code in (
        ({"status": "maybe"}, "invalid_status"),
        ({"limit": -1}, "invalid_limit"),
        ({"cursor": "%%%"}, "invalid_cursor"),
    ):
        response = api.get("transactions/", params)
        assert response.status_code == 400, params
        assert error_of(response)["code"] == code, params


def test_after_lists_only_newer_transactions(api: Api, released) -> None:
    first = api.get("transactions/").json()["transactions"][0]["id"]
    newer = api.get("transactions/", {"after": first}).json()["transactions"]
    assert [t["committed_version"] for t in newer] == [2]
    assert api.get("transactions/", {"after": -1}).status_code == 400
