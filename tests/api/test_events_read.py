"""GET /api/v1/contexts/{slug}/events/{seq}/ : an event's text in chunks (R31)."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


def test_a_large_log_is_read_chunk_by_chunk(api: Api) -> None:
    text = "".join(f"line {i}\n" for i in range(2000))
    event = api.observe(text)
    first = api.get(f"events/{event['seq']}/", {"offset": 0, "length": 1000}).json()
    assert first["ref"] == event["ref"]
    assert first["size"] == len(text)
    assert first["status"] == "active"
    assert first["content"] == text[:1000]
    assert first["next_offset"] == 1000
    parts, offset = [], 0
    while offset is not None:
        chunk = api.get(f"events/{event['seq']}/", {"offset": offset, "length": 5000}).json()
        parts.append(chunk["content"])
        offset = chunk["next_offset"]
    assert "".join(parts) == text


def test_a_retired_event_is_still_readable(api: Api) -> None:
    event = api.observe("digested output")
    api.commit(f"(context-tx (retire {event['ref']}))")
    body = api.get(f"events/{event['seq']}/").json()
    assert body["status"] == "retired"
    assert body["content"] == "digested output"


def test_unknown_or_out_of_range_events_are_404(api: Api) -> None:
    for seq in (5, 2**63, 10**30):
        response = api.get(f"events/{seq}/")
        assert response.status_code == 404, seq
        assert error_of(response)["code"] == "not_found"


def test_bad_offset_or_length_is_400(api: Api) -> None:
    api.observe("x")
    for params, code in (
        ({"offset": -1}, "invalid_offset"),
        ({"length": 0}, "invalid_length"),
        ({"length": 10**9}, "invalid_length"),
        ({"offset": "a"}, "invalid_offset"),
    ):
        response = api.get("events/1/", params)
        assert response.status_code == 400, params
        assert error_of(response)["code"] == code, params
