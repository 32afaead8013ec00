"""GET frames/?source=@eN lists the frames citing an event (R63): provenance both ways."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


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
    assert api.get("frames/", {"source": "@e999"}).json()["frames"] == []


def test_a_source_that_is_no_ref_is_refused(api: Api, released) -> None:
    response = api.get("frames/", {"source": "not a ref"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_request"
    both = api.get("frames/", {"source": released["log"]["ref"], "as_of": 1})
    assert both.status_code == 400
    assert error_of(both)["code"] == "conflicting_filters"
