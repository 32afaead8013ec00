"""POST recall/ from an event ref: the event, then the frames citing it (R63); an event the
context does not have is 404 and named as an event."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, error_of


def test_recall_from_an_event_lists_the_frames_citing_it(api: Api, released: Any) -> None:
    ref = released["log"]["ref"]
    response = api.post("recall/", {"frame_id": ref, "direction": "descendants", "depth": 2})
    assert response.status_code == 200
    body = response.json()
    assert [(n.get("id") or n["ref"], n["depth"]) for n in body["nodes"]] == [
        (ref, 0),
        ("test-result", 1),
    ]
    assert body["nodes"][0]["type"] == "event"
    assert {"from": "test-result", "to": ref, "kind": "source"} in [
        {k: e[k] for k in ("from", "to", "kind")} for e in body["edges"]
    ]


def test_an_unknown_event_ref_is_404_naming_an_event(api: Api, released: Any) -> None:
    response = api.post("recall/", {"frame_id": "@e999", "direction": "descendants"})
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "not_found"
    assert "event '@e999' does not exist" in error["message"]
