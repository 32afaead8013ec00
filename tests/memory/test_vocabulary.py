"""One rule each for event refs, frame ids, relation names and thread names (memory.vocabulary)."""

from __future__ import annotations

import pytest

from memory.vocabulary import (
    FRAME_ID_MAX,
    RELATION_NAME_MAX,
    THREAD_MAX,
    event_ref,
    event_seq,
    is_event_ref,
    is_frame_id,
    is_relation_name,
    is_thread_name,
    seq_from_text,
    seq_of,
)


def test_event_refs_round_trip():
    assert event_ref(42) == "@e42"
    assert seq_of("@e42") == event_seq("@e42") == 42
    assert seq_of(event_ref(10**18 - 1)) == 10**18 - 1


@pytest.mark.parametrize(
    "text",
    ["@e0", "@e017", "@e", "e42", "@e42\n", "@e42 ", " @e42", "@e²", "@e٣", "@e1" + "0" * 18],
)
def test_malformed_event_refs_are_refused(text):
    assert not is_event_ref(text)
    assert seq_of(text) is None
    with pytest.raises(ValueError):
        event_seq(text)


def test_a_bare_number_reads_as_a_sequence_number_with_ascii_digits_only():
    assert seq_from_text("42") == seq_from_text("@e42") == 42
    for text in ("²", "٣", "042", "-1", "4 2", "42\n", ""):
        assert seq_from_text(text) is None


def test_names_have_their_documented_maxima():
    assert is_frame_id("a" * FRAME_ID_MAX) and not is_frame_id("a" * (FRAME_ID_MAX + 1))
    assert is_relation_name("a" * RELATION_NAME_MAX)
    assert not is_relation_name("a" * (RELATION_NAME_MAX + 1))
    assert is_thread_name("T" * THREAD_MAX) and not is_thread_name("T" * (THREAD_MAX + 1))


@pytest.mark.parametrize("check", [is_frame_id, is_relation_name, is_thread_name])
def test_no_trailing_newline_or_non_ascii_passes(check):
    assert check("ok1")
    for text in ("ok1\n", "ok\u00e91", "ok\uff11", "", ".ok", None, 7):
        assert not check(text)


def test_thread_names_allow_colons_and_capitals():
    assert is_thread_name("Worker:2.retry_1-b")
    assert not is_thread_name("main thread")
