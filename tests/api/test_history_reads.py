"""as_of=N on frames, one frame, relations and recall; GET diff/ (R52) over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, error_of


@pytest.fixture
def changed(api: Api, released: dict[str, Any]) -> dict[str, Any]:
    """Version 2 is `released`; version 3 revises release and unrelates; 4 retires."""
    at_two = {
        "frames": api.get("frames/").json(),
        "release": api.get("frames/release/").json(),
        "relations": api.get("relations/").json(),
        "recall": api.post("recall/", {"frame_id": "release", "direction": "both"}).json(),
    }
    api.commit(
        "(context-tx (reason r3) (revise release (goal ship-v2))"
        " (unrelate test-result supports release))"
    )
    api.commit("(context-tx (reason r4) (retire test-result))")
    return at_two


def test_reads_as_of_equal_the_reads_then(api: Api, changed: dict[str, Any]) -> None:
    assert api.get("frames/", {"as_of": 2}).json() == changed["frames"]
    assert api.get("frames/release/", {"as_of": 2}).json() == changed["release"]
    assert api.get("relations/", {"as_of": 2}).json() == changed["relations"]
    recall = api.post("recall/", {"frame_id": "release", "direction": "both", "as_of": 2}).json()
    assert recall["nodes"] == changed["recall"]["nodes"]
    assert recall["edges"] == changed["recall"]["edges"]
    assert recall["version"] == 2
    now = api.get("frames/release/").json()
    assert now["body"] == {"goal": "ship-v2"} and now["revision"] == 2
    assert api.get("frames/release/", {"as_of": 4}).json() == now
    assert api.get("frames/", {"as_of": 0}).json() == {"frames": [], "next_cursor": None}


def test_as_of_errors(api: Api, changed: dict[str, Any]) -> None:
    assert error_of(api.get("frames/", {"as_of": 5}))["code"] == "invalid_version"
    assert error_of(api.get("frames/", {"as_of": "x"}))["code"] == "invalid_version"
    assert error_of(api.get("frames/test-result/", {"as_of": 1}))["code"] == "not_found"
    response = api.post("recall/", {"frame_id": "release", "as_of": 1, "as_observation": True})
    assert response.status_code == 400


def test_as_of_cursor_is_bound_to_the_version(api: Api, changed: dict[str, Any]) -> None:
    page = api.get("frames/", {"as_of": 2, "limit": 1}).json()
    assert page["next_cursor"]
    rest = api.get("frames/", {"as_of": 2, "limit": 1, "cursor": page["next_cursor"]}).json()
    assert [f["id"] for f in page["frames"] + rest["frames"]] == ["release", "test-result"]
    other = api.get("frames/", {"as_of": 3, "limit": 1, "cursor": page["next_cursor"]})
    assert error_of(other)["code"] == "invalid_cursor"


def test_diff_endpoint(api: Api, changed: dict[str, Any]) -> None:
    body = api.get("diff/", {"from": 2, "to": 4}).json()
    assert body["frames"]["revised"][0]["before"] == {"goal": "ship-v1"}
    assert body["frames"]["revised"][0]["after"] == {"goal": "ship-v2"}
    assert [f["id"] for f in body["frames"]["retiring"]] == ["test-result"]
    assert body["relations"]["removed"] == [
        {"subject": "test-result", "name": "supports", "object": "release", "version": 3}
    ]
    assert [t["reason"] for t in body["transactions"]] == ["r3", "r4"]
    assert api.get("diff/", {"from": 2}).json() == body
    assert error_of(api.get("diff/"))["code"] == "invalid_version"
    assert error_of(api.get("diff/", {"from": 4, "to": 2}))["code"] == "invalid_version"
