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


def test_search_pages_counts_and_filters_transaction_events(api: Api, released) -> None:
    for i in range(5):
        api.observe(f"release note {i}", kind="agent_message")
    drain()
    first = api.get("search/", {"q": "release", "limit": 3}).json()
    assert first["hits"][0]["id"] == "release"  # the frame named by the query comes first
    assert first["total"] == 6 and first["total_exact"] is True
    assert first["next_offset"] == 3
    rest = api.get("search/", {"q": "release", "limit": 3, "offset": 3}).json()
    assert rest["next_offset"] is None
    seen = [h["ref"] for h in first["hits"] + rest["hits"]]
    assert len(set(seen)) == 6
    assert all(h["kind"] != "transaction" for h in first["hits"] + rest["hits"])
    with_tx = api.get("search/", {"q": "release", "transactions": "true", "limit": 50}).json()
    assert with_tx["total"] > 6
    assert "transaction" in {h["kind"] for h in with_tx["hits"]}
    emoji = api.observe("shipped 🚀", kind="agent_message")
    drain()
    assert [h["ref"] for h in api.get("search/", {"q": "🚀"}).json()["hits"]] == [emoji["ref"]]


def test_bad_queries_are_400(api: Api) -> None:
    for params in (
        {},
        {"q": ""},
        {"q": "x", "type": "relation"},
        {"q": "x", "since": "yesterday"},
        {"q": "x", "limit": 1000},
        {"q": "x", "status": "asleep"},
        {"q": "x" * 2000},
        {"q": "x", "offset": -1},
        {"q": "x", "offset": 1000},
        {"q": "!!!"},
    ):
        response = api.get("search/", params)
        assert response.status_code == 400, params
        assert error_of(response)["code"].startswith("invalid_")
