"""GET /api/v1/contexts/{slug}/relations/ : filters subject, object, name (R5)."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


def test_relations_filtered_by_subject_object_and_name(api: Api, released) -> None:
    api.commit("(context-tx (derive plan (a b)) (relate plan depends-on release))")
    everything = api.get("relations/").json()["relations"]
    assert [(r["subject"], r["name"], r["object"]) for r in everything] == [
        ("test-result", "supports", "release"),
        ("plan", "depends-on", "release"),
    ]
    assert len(api.get("relations/", {"object": "release"}).json()["relations"]) == 2
    assert len(api.get("relations/", {"subject": "plan"}).json()["relations"]) == 1
    named = api.get("relations/", {"name": "supports"}).json()["relations"]
    assert [r["subject"] for r in named] == ["test-result"]


def test_unrelated_edges_appear_only_with_include_removed(api: Api, released) -> None:
    api.commit("(context-tx (unrelate test-result supports release))")
    assert api.get("relations/").json()["relations"] == []
    history = api.get("relations/", {"include_removed": "true"}).json()["relations"]
    assert history[0]["live"] is False
    assert history[0]["removed_version"] == 3


def test_bad_filters_are_400(api: Api) -> None:
    for params, code in (
        ({"include_removed": "perhaps"}, "invalid_flag"),
        ({"limit": "many"}, "invalid_limit"),
        ({"name": "x" * 100}, "invalid_request"),
    ):
        response = api.get("relations/", params)
        assert response.status_code == 400, params
        assert error_of(response)["code"] == code, params
