"""GET /api/v1/contexts/{slug}/events/{seq}/ : an event's text in chunks (R31)."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.models import Context
from memory.read.history import read_event_chunk
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


# Reading an event's text at an offset past its end is 400 `invalid_offset` naming the
# text's length, however large the offset (an offset beyond PostgreSQL's 32-bit string
# positions was a 500), and in memory as through the API.


@pytest.mark.parametrize("offset", [6, 2**31 - 1, 2**31, 99_999_999_999, 10**12])
def test_a_huge_offset_is_past_the_end(api: Api, offset: int) -> None:
    seq = api.observe("hello")["seq"]
    response = api.get(f"events/{seq}/", {"offset": offset})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_offset"
    assert error["details"] == [{"field": "offset", "total": 5}]


def test_the_memory_function_answers_the_same(api: Api, alpha: Context) -> None:
    seq = api.observe("hello")["seq"]
    with pytest.raises(InvalidRequest) as raised:
        read_event_chunk(alpha, seq, 99_999_999_999)
    assert raised.value.code == "invalid_offset"


def test_the_end_itself_reads_nothing(api: Api) -> None:
    seq = api.observe("hello")["seq"]
    response = api.get(f"events/{seq}/", {"offset": 5})
    assert response.status_code == 200
    assert response.json()["next_offset"] is None
