"""A recall that names no `direction` walks from a frame to its ancestors and from an event
to the frames citing it (docs/rest.md: "from an event (`@e42`: the frames citing it)"):
an event's ancestors are itself alone. A direction given is kept as given."""

from __future__ import annotations

from tests.api.conftest import Api


def _ids(answer: dict) -> set[str]:
    return {node.get("id") or node.get("ref") for node in answer["nodes"]}


def test_an_event_root_lists_its_citers_without_a_direction(api: Api) -> None:
    ref = api.post("events/", {"kind": "user_message", "content": "ship v1"}).json()["ref"]
    api.commit(f"(context-tx (derive goal (from {ref}) (goal ship)))")

    by_default = api.post("recall/", {"frame_id": ref}).json()
    upward = api.post("recall/", {"frame_id": ref, "direction": "ancestors"}).json()
    from_frame = api.post("recall/", {"frame_id": "goal"}).json()

    assert "goal" in _ids(by_default)
    assert _ids(upward) == {ref}
    assert ref in _ids(from_frame)
