"""GET /api/v1/contexts/{slug}/search/ : lexical search with filters and index lag (R33, R34)."""

from __future__ import annotations

from memory.search.indexer import drain
from tests.api.conftest import Api, error_of


def test_search_finds_frames_and_events_after_indexing(api: Api, released) -> None:
    api.observe("release candidate uploaded to staging", kind="external_fact")
    drain()
    body = api.get("search/", {"q": "staging"}).json()
    assert [h["ref"] for h in body["hits"]] == ["@e4"]
    assert "lag" in body
    frames = api.get("search/", {"q": "passed", "type": "frame"}).json()["hits"]
    assert [h["id"] for h in frames] == ["test-result"]


def test_search_reports_lag_before_the_indexer_ran(api: Api) -> None:
    api.observe("not indexed yet")
    body = api.get("search/", {"q": "indexed"}).json()
    assert body["hits"] == []
    assert body["lag"]["pending_intents"] >= 1


def test_search_never_crosses_contexts(api: Api, beta, beta_token) -> None:
    Api("beta", beta_token).observe("secret beta words")
    drain()
    assert api.get("search/", {"q": "secret"}).json()["hits"] == []


def test_bad_queries_are_400(api: Api) -> None:
    for params in (
        {},
        {"q": ""},
        {"q": "x", "type": "relation"},
        {"q": "x", "since": "yesterday"},
        {"q": "x", "limit": 1000},
        {"q": "x", "status": "asleep"},
        {"q": "x" * 2000},
    ):
        response = api.get("search/", params)
        assert response.status_code == 400, params
        assert error_of(response)["code"].startswith("invalid_")
