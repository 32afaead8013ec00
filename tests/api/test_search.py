"""GET /api/v1/contexts/{slug}/search/ : lexical search with filters and index lag (R33, R34)."""

from __future__ import annotations

import pytest

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


# GET search/ refuses filters no document can satisfy together (400 `conflicting_filters`,
# both fields named) and an empty time range (400 `invalid_time`), instead of an empty page
# that reads as "nothing matched"; filters that can match still answer.

CONFLICTS = [
    ({"type": "frame", "kind": "tool_result"}, {"type", "kind"}),
    ({"type": "event", "kind": "frame"}, {"type", "kind"}),
    ({"type": "frame", "status": "recorded"}, {"type", "status"}),
    ({"kind": "frame", "status": "recorded"}, {"kind", "status"}),
    ({"type": "event", "status": "retiring"}, {"type", "status"}),
    ({"kind": "tool_result", "status": "retiring"}, {"kind", "status"}),
    ({"kind": "transaction", "transactions": "false"}, {"kind", "transactions"}),
    ({"kind": "user_message", "status": "recorded"}, {"kind", "status"}),
    ({"kind": "agent_message", "status": "active"}, {"kind", "status"}),
    ({"kind": "transaction", "status": "retired"}, {"kind", "status"}),
]


@pytest.mark.parametrize(("filters", "fields"), CONFLICTS)
def test_filters_that_never_match_together_are_refused_naming_both(
    api: Api, filters: dict[str, str], fields: set[str]
) -> None:
    response = api.get("search/", {"q": "release", **filters})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "conflicting_filters"
    assert {d["field"] for d in error["details"]} == fields


def test_an_empty_transactions_flag_is_refused_not_read_as_absent(api: Api) -> None:
    response = api.get("search/", {"q": "release", "transactions": ""})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_flag"


def test_since_not_before_until_is_an_invalid_time_naming_both(api: Api) -> None:
    same = "2026-01-01T00:00:00Z"
    for since, until in ((same, same), ("2026-02-01T00:00:00Z", same)):
        response = api.get("search/", {"q": "release", "since": since, "until": until})
        assert response.status_code == 400
        error = error_of(response)
        assert error["code"] == "invalid_time"
        assert [d["field"] for d in error["details"]] == ["since", "until"]
        assert all("earlier" in d["message"] for d in error["details"])


def test_filters_that_can_match_still_answer(api: Api, released) -> None:
    drain()
    frames = api.get("search/", {"q": "release", "kind": "frame"}).json()["hits"]
    assert frames and {h["type"] for h in frames} == {"frame"}
    echoes = api.get("search/", {"q": "release", "kind": "transaction", "transactions": "true"})
    assert echoes.status_code == 200
    assert {h["kind"] for h in echoes.json()["hits"]} == {"transaction"}
    alone = api.get("search/", {"q": "release", "kind": "transaction"}).json()["hits"]
    assert alone and {h["kind"] for h in alone} == {"transaction"}
    recorded = api.get("search/", {"q": "passed", "type": "event", "status": "recorded"})
    assert recorded.status_code == 200


@pytest.mark.parametrize(
    "since",
    [
        "2020-01-01",  # a date alone
        "2020-01-01T00:00:00",  # no offset: whose midnight?
        "\uff12020-01-01T00:00:00Z",  # a full-width digit
        "2020-01-01T00:00:00.1234567Z",  # a seventh fractional digit would be cut off
        "2025-02-30T00:00Z",  # well formed, but no such day
        "2025-13-45T25:99Z",
        "2025-01-01T24:00:00Z",
        "2025-01-01T00:00:00+99:99",
        "0000-01-01T00:00:00Z",
        "",
    ],
)
def test_a_time_that_would_be_guessed_at_is_refused(api: Api, since: str) -> None:
    response = api.get("search/", {"q": "release", "since": since})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_time"
    assert [d["field"] for d in error["details"]] == ["since"]


def test_an_unencoded_plus_in_a_time_is_echoed_and_told_to_be_written_2b(api: Api) -> None:
    # `+` in a query string is a space: the offset arrives as "18 00:00".
    response = api.client.get(api.url("search/") + "?q=x&until=2026-12-04T08:55:18+00:00")

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_time"
    assert "got '2026-12-04T08:55:18 00:00'" in error["message"]
    assert "%2B" in error["message"]
    assert error["details"][0]["field"] == "until"


def test_times_with_their_offset_are_read(api: Api, released) -> None:
    drain()
    # +20:00 is past PostgreSQL's offsets (±15:59): read as its instant, 2000-01-01T00:00Z.
    for since in (
        "2000-01-01T00:00Z",
        "2000-01-01T00:00:00.123456+02:00",
        "2000-01-01T20:00+20:00",
    ):
        response = api.get("search/", {"q": "release", "since": since})
        assert response.status_code == 200
        assert response.json()["hits"]
    later = api.get("search/", {"q": "release", "since": "2999-01-01T00:00:00Z"})
    assert later.json()["hits"] == []
