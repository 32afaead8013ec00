"""Reading an event by ref in chunks, retired or not (R31, R35)."""

from __future__ import annotations

import pytest

from memory.contexts import create_context
from memory.errors import InvalidRequest, NotFound
from memory.read.history import read_event_chunk


def read_all(context, ref, length):
    parts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        chunk = read_event_chunk(context, ref, offset, length)
        parts.append(chunk["content"])
        offset = chunk["next_offset"]
    return parts


def test_a_large_log_is_read_piece_by_piece(release_log, release_team):
    full = "\n".join(f"test_{n:04d} ... ok" for n in range(3000)) + "\n3000 passed"
    parts = read_all(release_team.context, release_log, 10_000)
    assert "".join(parts) == full
    assert len(parts) == -(-len(full) // 10_000)
    assert all(len(p) == 10_000 for p in parts[:-1])


def test_a_chunk_names_its_size_kind_and_status(release_log, release_team):
    chunk = read_event_chunk(release_team.context, "@e42", 0, 100)
    assert chunk["ref"] == "@e42" and chunk["seq"] == 42
    assert chunk["kind"] == "tool_result"
    assert (
        chunk["size"]
        == chunk["total"]
        == len("\n".join(f"test_{n:04d} ... ok" for n in range(3000))) + 12
    )
    assert chunk["status"] == "active" and chunk["active"] and not chunk["retired"]
    assert chunk["offset"] == 0 and chunk["length"] == 100 and chunk["next_offset"] == 100


def test_a_retired_event_is_still_readable(release_frame, first_example):
    release_frame.commit(first_example.format(base=release_frame.version))
    chunk = read_event_chunk(release_frame.context, 42, 0, 64)
    assert chunk["status"] == "retired" and chunk["retired"]
    assert chunk["content"].startswith("test_0000 ... ok")


def test_offsets_count_characters_not_bytes(release_team):
    ref = release_team.observe("发布任务：测试通过")
    assert read_event_chunk(release_team.context, ref, 2, 2)["content"] == "任务"
    end = read_event_chunk(release_team.context, ref, 8, 10)
    assert end["content"] == "过" and end["next_offset"] is None


def test_reading_at_the_end_gives_an_empty_last_chunk(release_team):
    ref = release_team.observe("short")
    chunk = read_event_chunk(release_team.context, ref, 5, 10)
    assert chunk["content"] == "" and chunk["next_offset"] is None and chunk["size"] == 5


def test_reading_past_the_end_is_refused_with_the_size(release_team):
    ref = release_team.observe("short")
    with pytest.raises(InvalidRequest) as caught:
        read_event_chunk(release_team.context, ref, 100, 10)
    assert caught.value.code == "invalid_offset"
    assert caught.value.details == [{"field": "offset", "total": 5}]


def test_non_observations_are_recorded_history(release_frame):
    chunk = read_event_chunk(release_frame.context, "@e43", 0, 1000)
    assert chunk["kind"] == "transaction"
    assert chunk["status"] == "recorded"
    assert chunk["content"].startswith("(context-tx")


def test_unknown_refs_are_not_found_and_other_contexts_are_invisible(release_log, release_team):
    other = create_context("other-team")
    with pytest.raises(NotFound):
        read_event_chunk(other, release_log)
    with pytest.raises(NotFound):
        read_event_chunk(release_team.context, "@e999")


@pytest.mark.parametrize(
    ("seq", "offset", "length", "code"),
    [
        ("e42x", 0, 10, "invalid_ref"),
        (0, 0, 10, "invalid_ref"),
        ("@e42", -1, 10, "invalid_offset"),
        ("@e42", 0, 0, "invalid_length"),
        ("@e42", 0, 10_000_000, "invalid_length"),
    ],
)
def test_bad_arguments_are_refused(release_log, release_team, seq, offset, length, code):
    with pytest.raises(InvalidRequest) as caught:
        read_event_chunk(release_team.context, seq, offset, length)
    assert caught.value.code == code
