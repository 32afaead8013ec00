"""POST /api/v1/contexts/{slug}/recall/ : graph recall, paging, stale cursors and views
(R27-R30)."""

from __future__ import annotations

from memory.models import Event
from tests.api.conftest import Api, error_of


def test_recall_walks_sources_and_relations(api: Api, released) -> None:
    response = api.post("recall/", {"frame_id": "release", "direction": "descendants", "depth": 2})
    assert response.status_code == 200
    body = response.json()
    ids = [n.get("id") or n.get("ref") for n in body["nodes"]]
    assert ids[:2] == ["release", "test-result"]
    assert {"from": "test-result", "to": "release", "kind": "relation", "name": "supports"} in [
        {k: e.get(k) for k in ("from", "to", "kind", "name")} for e in body["edges"]
    ]
    assert body["next_cursor"] is None
    assert body["version"] == 2


def test_ancestors_reach_the_event_leaf_with_its_text_only_when_asked(api: Api, released) -> None:
    body = api.post("recall/", {"frame_id": "test-result", "include_events": True}).json()
    event = next(n for n in body["nodes"] if n["type"] == "event")
    assert event["ref"] == released["log"]["ref"]
    assert event["content"] == "suite: 1600 passed"
    bare = api.post("recall/", {"frame_id": "test-result"}).json()
    assert "content" not in next(n for n in bare["nodes"] if n["type"] == "event")


def test_a_cursor_after_a_change_is_409_stale_cursor(api: Api, released) -> None:
    page = api.post("recall/", {"frame_id": "release", "direction": "both", "max_nodes": 1}).json()
    assert page["next_cursor"]
    api.commit("(context-tx (revise release (goal ship-v2)))")
    response = api.post(
        "recall/",
        {"frame_id": "release", "direction": "both", "max_nodes": 1, "cursor": page["next_cursor"]},
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "stale_cursor"


def test_an_old_view_version_is_409_stale_view(api: Api, released) -> None:
    response = api.post("recall/", {"frame_id": "release", "view_version": 1})
    assert response.status_code == 409
    assert error_of(response)["code"] == "stale_view"


def test_as_observation_appends_a_recall_result(api: Api, released) -> None:
    body = api.post("recall/", {"frame_id": "release", "as_observation": True}).json()
    event = Event.objects.get(context__slug="alpha", seq=body["observation"]["seq"])
    assert event.kind == "recall_result"


def test_unknown_frame_is_404_and_bad_parameters_400(api: Api, released) -> None:
    for frame_id in ("nothing-here", "e1"):
        missing = api.post("recall/", {"frame_id": frame_id})
        assert missing.status_code == 404
        assert error_of(missing)["code"] == "not_found"
    for body, code in (
        ({}, "invalid_frame_id"),
        ({"frame_id": "Bad Id"}, "invalid_frame_id"),
        ({"frame_id": "@e0"}, "invalid_ref"),
        ({"frame_id": "release", "depth": 5}, "invalid_depth"),
        ({"frame_id": "release", "max_nodes": 0}, "invalid_max_nodes"),
        ({"frame_id": "release", "direction": "sideways"}, "invalid_direction"),
        ({"frame_id": "release", "cursor": 7}, "invalid_cursor"),
    ):
        response = api.post("recall/", body)
        assert response.status_code == 400, body
        assert error_of(response)["code"] == code, body
