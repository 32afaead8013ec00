"""Forks (R53), frozen contexts (R54) and evaluations read back (R55) through the API."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import issue_token
from memory.models import Context, Event, Frame, SearchDocument, TransactionRecord
from memory.search.indexer import drain
from tests.api.conftest import Api, error_of


def _state(slug: str) -> dict[str, Any]:
    ctx = Context.objects.get(slug=slug)
    return {
        "counters": (ctx.version, ctx.tick, ctx.last_seq, ctx.used_tokens, ctx.in_maintenance),
        "frames": sorted(
            Frame.objects.filter(context=ctx).values_list(
                "frame_id", "revision", "status", "protected", "body", "sources"
            )
        ),
        "events": sorted(
            Event.objects.filter(context=ctx).values_list(
                "seq", "kind", "content", "active", "pending", "request_state"
            )
        ),
        "transactions": sorted(
            TransactionRecord.objects.filter(context=ctx).values_list(
                "committed_version", "status", "text"
            ),
            key=str,
        ),
    }


def test_fork_now_copies_state_and_answers_lineage(api: Api, released: dict[str, Any]) -> None:
    before = _state(api.slug)
    response = api.post("forks/", {"slug": "alpha-copy"})
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "alpha-copy"
    assert body["forked_from"] == {"slug": api.slug, "version": 2, "tick": 1}
    assert _state("alpha-copy") == before
    assert _state(api.slug) == before
    fork = Api("alpha-copy", body["token"])
    shown = fork.get().json()
    assert shown["forked_from"] == {"slug": api.slug, "version": 2, "tick": 1}
    assert shown["version"] == 2
    # The fork's token does not reach the source, and writes stay apart.
    assert Api(api.slug, body["token"]).get().status_code == 404
    fork.observe("only in the fork")
    assert _state(api.slug) == before


def test_fork_at_version_equals_the_source_then(api: Api, released: dict[str, Any]) -> None:
    at_one = _state(api.slug)
    api.commit("(context-tx (revise release (goal ship-v2)) (retire test-result))")
    api.observe("after version 3")
    response = api.post("forks/", {"slug": "back", "at_version": 2})
    assert response.status_code == 201, response.json()
    assert _state("back") == at_one
    assert response.json()["forked_from"]["version"] == 2


def test_fork_search_index_is_its_own(api: Api, released: dict[str, Any]) -> None:
    drain()
    response = api.post("forks/", {"slug": "searchable"})
    fork_ctx = Context.objects.get(slug="searchable")
    drain()
    src_docs = SearchDocument.objects.filter(context__slug=api.slug).count()
    assert SearchDocument.objects.filter(context=fork_ctx).count() == src_docs
    fork = Api("searchable", response.json()["token"])
    fork.observe("zanzibar appears only in the fork")
    drain()
    hits = fork.get("search/", {"q": "zanzibar"}).json()["hits"]
    assert [h["ref"] for h in hits] == ["@e4"]
    assert api.get("search/", {"q": "zanzibar"}).json()["hits"] == []
    passed = fork.get("search/", {"q": "passed"}).json()["hits"]
    assert passed and all(h.get("ref") or h.get("id") for h in passed)


def test_fork_refuses_bad_version_and_taken_slug(api: Api, released: dict[str, Any]) -> None:
    assert error_of(api.post("forks/", {"at_version": 99}))["code"] == "invalid_version"
    assert api.post("forks/", {"slug": "beta-x"}).status_code == 201
    assert error_of(api.post("forks/", {"slug": "beta-x"}))["code"] == "context_exists"


WRITES: list[tuple[str, dict[str, Any]]] = [
    ("events/", {"kind": "tool_result", "content": "x"}),
    ("evaluations/", {}),
    ("transactions/", {"text": "(context-tx (derive z (a 1)))"}),
    ("actions/", {"name": "deploy"}),
    ("recall/", {"frame_id": "release", "as_observation": True}),
]


def test_frozen_refuses_every_write_and_keeps_reads(api: Api, released: dict[str, Any]) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": true}', "application/json")
    assert response.status_code == 200, response.json()
    assert response.json()["frozen"] is True
    before = _state(api.slug)
    for path, body in WRITES:
        error = error_of(api.post(path, body))
        assert error["code"] == "context_frozen", (path, error)
    assert api.post(WRITES[0][0], WRITES[0][1]).status_code == 409
    assert _state(api.slug) == before
    assert TransactionRecord.objects.filter(context__slug=api.slug, status="rejected").count() == 0
    assert api.get("frames/").status_code == 200
    assert api.get("events/").status_code == 200
    assert api.post("recall/", {"frame_id": "release"}).status_code == 200
    assert api.get("search/", {"q": "passed"}).status_code == 200
    assert api.post("forks/", {"slug": "thawed"}).status_code == 201
    assert Context.objects.get(slug="thawed").frozen is False
    response = api.client.generic("PATCH", api.url(), '{"frozen": false}', "application/json")
    assert error_of(response)["code"] == "scope_insufficient"  # unfreezing is an admin's
    admin = Api(api.slug, issue_token(Context.objects.get(slug=api.slug), scope="admin").raw)
    response = admin.client.generic("PATCH", api.url(), '{"frozen": false}', "application/json")
    assert response.json()["frozen"] is False
    assert api.post(*WRITES[0]).status_code == 201


def test_patch_refuses_other_fields(api: Api) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": "yes"}', "application/json")
    assert response.status_code == 400
    response = api.client.generic("PATCH", api.url(), '{"version": 3}', "application/json")
    assert response.status_code == 400


def test_evaluations_list_and_detail(api: Api, released: dict[str, Any]) -> None:
    api.observe("second batch")
    created = api.post("evaluations/", {}).json()
    listed = api.get("evaluations/").json()
    assert [e["id"] for e in listed["evaluations"]][-1] == created["id"]
    first, second = listed["evaluations"]
    assert first["claimed"] == [released["log"]["ref"]]
    assert first["view_version"] == 0 and first["tick"] == 1
    assert second["claimed"] == ["@e4"] and second["view_version"] == 2
    detail = api.get(f"evaluations/{created['id']}/").json()
    assert detail["input"]["text"] == created["text"]
    assert detail["input"]["context"] == created["context"]
    assert [f["id"] for f in detail["frames_seen"]] == ["release", "test-result"]
    assert "@e4" in detail["observations_seen"]
    page = api.get("evaluations/", {"limit": 1}).json()
    assert len(page["evaluations"]) == 1 and page["next_cursor"]
    rest = api.get("evaluations/", {"limit": 1, "cursor": page["next_cursor"]}).json()
    assert rest["evaluations"][0]["id"] == created["id"]


def test_evaluation_of_another_context_is_not_found(
    api: Api, beta: Context, beta_token: str
) -> None:
    other = Api(beta.slug, beta_token)
    other.observe("beta input")
    evaluation = other.post("evaluations/", {}).json()
    assert error_of(api.get(f"evaluations/{evaluation['id']}/"))["code"] == "not_found"


@pytest.mark.parametrize("version", [-1, "x"])
def test_fork_bad_version_input(api: Api, version: Any) -> None:
    assert api.post("forks/", {"at_version": version}).status_code == 400
