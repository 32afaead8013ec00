"""GET /api/v1/contexts/{slug}/frames/ and frames/{id}/ : frames, revisions, write history."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, error_of


def test_frames_have_the_contract_shape(api: Api, released) -> None:
    frames = api.get("frames/").json()["frames"]
    assert [f["id"] for f in frames] == ["release", "test-result"]
    result = frames[1]
    assert result["revision"] == 1
    assert result["status"] == "active"
    assert result["protected"] is False
    assert result["body"] == {"tests": "passed"}
    assert result["sources"] == [released["log"]["ref"]]
    assert result["retire"] is None


def test_a_retiring_frame_shows_its_window(api: Api, released) -> None:
    api.commit('(context-tx (reason "superseded") (retire test-result))')
    frame = api.get("frames/test-result/").json()
    assert frame["status"] == "retiring"
    assert frame["retire"] == {
        "requested_tick": 1,
        "due_tick": 3,
        "ticks_left": 2,
        "reason": "superseded",
    }
    statuses = api.get("frames/", {"status": "retiring"}).json()["frames"]
    assert [f["id"] for f in statuses] == ["test-result"]


def test_frame_detail_has_revisions_and_write_history(api: Api, released) -> None:
    api.commit("(context-tx (revise release (goal ship-v2)))")
    frame = api.get("frames/release/").json()
    assert frame["revision"] == 2
    assert [r["revision"] for r in frame["revisions"]] == [1, 2]
    assert frame["revisions"][0]["body"] == {"goal": "ship-v1"}
    assert frame["revisions"][1]["version"] == 3
    history = frame["write_history"]
    assert [h["version"] for h in history] == [1, 3]
    assert "revise release" in history[1]["text"]


def test_frames_page_by_id(api: Api, released) -> None:
    page = api.get("frames/", {"limit": 1}).json()
    assert [f["id"] for f in page["frames"]] == ["release"]
    rest = api.get("frames/", {"limit": 1, "cursor": page["next_cursor"]}).json()
    assert [f["id"] for f in rest["frames"]] == ["test-result"]


def test_unknown_or_malformed_frame_ids_are_404(api: Api) -> None:
    for frame_id in ("missing", "Not-Valid", "x" * 300):
        response = api.get(f"frames/{frame_id}/")
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"


def test_bad_status_filter_is_400(api: Api) -> None:
    response = api.get("frames/", {"status": "asleep"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_status"


# GET frames/?source=@eN lists the frames citing an event (R63): provenance both ways.


def test_the_frames_citing_an_event_are_listed(api: Api, released) -> None:
    ref = released["log"]["ref"]
    other = api.observe("lint: clean", kind="tool_result")
    api.commit(f"(context-tx (derive lint-result (from {other['ref']}) (lint clean)))")
    api.commit(f"(context-tx (derive suite-size (from {ref} test-result) (tests 1600)))")
    citing = api.get("frames/", {"source": ref}).json()["frames"]
    assert [f["id"] for f in citing] == ["suite-size", "test-result"]
    assert [f["id"] for f in api.get("frames/", {"source": "test-result"}).json()["frames"]] == [
        "suite-size"
    ]
    assert api.get("frames/", {"source": "suite-size"}).json()["frames"] == []


@pytest.mark.parametrize(("source", "kind"), [("@e999", "event"), ("no-such-frame", "frame")])
def test_a_source_naming_no_item_is_not_found_as_recall_says(
    api: Api, released, source: str, kind: str
) -> None:
    # "Nothing cites it" is an empty list; a source that names nothing is 404, as recall's root.
    response = api.get("frames/", {"source": source})
    recalled = api.post("recall/", {"frame_id": source}, format="json")

    assert response.status_code == recalled.status_code == 404, response.json()
    error = error_of(response)
    assert error["code"] == error_of(recalled)["code"] == "not_found"
    assert f"{kind} {source!r}" in error["message"]
    assert error["details"] == [{"field": "source", "ref": source}]


def test_a_source_that_is_no_ref_is_refused(api: Api, released) -> None:
    # The codes recall answers for the same values (invalid_ref when shaped like an event ref).
    for source, code in [("not a ref", "invalid_frame_id"), ("@e0", "invalid_ref")]:
        response = api.get("frames/", {"source": source})
        assert response.status_code == 400
        assert error_of(response)["code"] == code
        assert error_of(response)["details"][0]["field"] == "source"
    both = api.get("frames/", {"source": released["log"]["ref"], "as_of": 1})
    assert both.status_code == 400
    assert error_of(both)["code"] == "conflicting_filters"
