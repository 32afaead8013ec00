"""GET search/ refuses filters no document can satisfy together (400 `conflicting_filters`,
both fields named) and an empty time range (400 `invalid_time`), instead of an empty page
that reads as "nothing matched"; filters that can match still answer."""

from __future__ import annotations

import pytest

from memory.search.indexer import drain
from tests.api.conftest import Api, error_of

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


def test_times_with_their_offset_are_read(api: Api, released) -> None:
    drain()
    for since in ("2000-01-01T00:00Z", "2000-01-01T00:00:00.123456+02:00"):
        response = api.get("search/", {"q": "release", "since": since})
        assert response.status_code == 200
        assert response.json()["hits"]
    later = api.get("search/", {"q": "release", "since": "2999-01-01T00:00:00Z"})
    assert later.json()["hits"] == []
