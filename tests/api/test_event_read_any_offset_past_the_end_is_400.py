"""Reading an event's text at an offset past its end is 400 `invalid_offset` naming the
text's length, however large the offset (an offset beyond PostgreSQL's 32-bit string
positions was a 500), and in memory as through the API."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.models import Context
from memory.read.history import read_event_chunk
from tests.api.conftest import Api, error_of


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
