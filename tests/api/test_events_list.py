"""GET /api/v1/contexts/{slug}/events/ : newest last, cursor-paged, filters."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


def _seed(api: Api) -> None:
    api.observe("question", kind="user_message", thread="a")
    api.observe("log one", kind="tool_result", thread="a")
    api.observe("log two", kind="tool_result", thread="b")
    api.observe("thinking", kind="agent_message", thread="b")


def test_events_are_listed_oldest_first_with_previews(api: Api) -> None:
    _seed(api)
    body = api.get("events/").json()
    assert [e["ref"] for e in body["events"]] == ["@e1", "@e2", "@e3", "@e4"]
    assert body["events"][1]["preview"] == "log one"
    assert "content" not in body["events"][1]
    assert body["next_cursor"] is None


def test_cursor_pages_through_without_gaps(api: Api) -> None:
    _seed(api)
    first = api.get("events/", {"limit": 3}).json()
    assert [e["seq"] for e in first["events"]] == [1, 2, 3]
    second = api.get("events/", {"limit": 3, "cursor": first["next_cursor"]}).json()
    assert [e["seq"] for e in second["events"]] == [4]
    assert second["next_cursor"] is None


def test_filters_kind_thread_status_and_after(api: Api) -> None:
    _seed(api)
    kinds = api.get("events/", {"kind": "tool_result"}).json()["events"]
    assert [e["seq"] for e in kinds] == [2, 3]
    thread = api.get("events/", {"thread": "b"}).json()["events"]
    assert [e["seq"] for e in thread] == [3, 4]
    pending = api.get("events/", {"status": "pending"}).json()["events"]
    assert len(pending) == 4
    api.commit("(context-tx (retire @e2))")
    retired = api.get("events/", {"status": "retired"}).json()["events"]
    assert [e["seq"] for e in retired] == [2]
    assert [e["seq"] for e in api.get("events/", {"after": 3}).json()["events"]] == [4, 5]


def test_a_cursor_with_other_filters_is_refused(api: Api) -> None:
    _seed(api)
    cursor = api.get("events/", {"limit": 1}).json()["next_cursor"]
    response = api.get("events/", {"limit": 1, "cursor": cursor, "kind": "tool_result"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"


def test_bad_query_values_are_400(api: Api) -> None:
    for params, code in (
        ({"cursor": "not-a-cursor"}, "invalid_cursor"),
        ({"limit": 0}, "invalid_limit"),
        ({"limit": 10_000}, "invalid_limit"),
        ({"after": 2**70}, "invalid_request"),
        ({"kind": "nope"}, "invalid_kind"),
        ({"status": "sleeping"}, "invalid_status"),
        ({"thread": "a\x00b"}, "invalid_thread"),
    ):
        response = api.get("events/", params)
        assert response.status_code == 400, params
        assert error_of(response)["code"] == code, params


def test_an_event_has_one_status_wherever_it_is_read(api: Api) -> None:
    _seed(api)
    listed = {e["ref"]: e["status"] for e in api.get("events/").json()["events"]}
    assert listed == {"@e1": "active", "@e2": "active", "@e3": "active", "@e4": "recorded"}
    assert api.get("events/4/").json()["status"] == "recorded"
    recorded = api.get("events/", {"status": "recorded"}).json()["events"]
    assert [e["seq"] for e in recorded] == [4]
