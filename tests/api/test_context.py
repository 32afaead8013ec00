"""GET /api/v1/contexts/{slug}/ : the context's counters, settings and pressure."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


def test_context_shows_version_tick_settings_and_pressure(api: Api, released) -> None:
    response = api.get()
    assert response.status_code == 200
    body = response.json()
    assert body["slug"] == "alpha"
    assert body["version"] == 2
    assert body["tick"] == 1
    assert body["settings"]["grace_ticks"] == 2
    assert body["settings"]["capacity_tokens"] == 50_000
    assert set(body["pressure"]) >= {"used_tokens", "capacity_tokens", "level"}
    assert body["pressure"]["level"] == "ok"
    assert body["pressure"]["capacity_tokens"] == 50_000


def test_unknown_context_is_404_in_the_error_shape(api: Api) -> None:
    response = Api("nope", client=api.client).get()
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_context_list_shows_only_the_tokens_context(api: Api, beta) -> None:
    response = api.client.get("/api/v1/contexts/")
    assert response.status_code == 200
    assert [c["slug"] for c in response.json()["contexts"]] == ["alpha"]


def test_index_links_schema_docs_and_reachable_contexts(api: Api) -> None:
    body = api.client.get("/api/v1/").json()
    assert body["schema"] == "/api/schema/"
    assert body["docs"] == "/api/docs/"
    assert body["contexts"] == ["/api/v1/contexts/alpha/"]


def test_index_without_token_lists_nothing(db) -> None:
    from rest_framework.test import APIClient

    response = APIClient().get("/api/v1/")
    assert response.status_code == 200
    assert response.json()["contexts"] == []
