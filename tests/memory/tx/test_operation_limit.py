"""A transaction holds at most MAX_OPS operations (memory/limits.py), in either form; one
more is refused as `invalid_request` at the first operation too many, before the rest of a
large request is read, and nothing is written."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.limits import MAX_OPS
from memory.models import Frame
from memory.tx.engine import submit_transaction


def _text(count: int, tail: str = "") -> str:
    return "(context-tx " + " ".join(f"(derive f{i} (n v{i}))" for i in range(count)) + tail + ")"


def test_the_limit_itself_commits(release_team):
    release_team.commit(_text(MAX_OPS))
    assert Frame.objects.filter(context=release_team.context).count() == MAX_OPS


def test_one_operation_too_many_in_text_is_refused_and_writes_nothing(release_team):
    with pytest.raises(InvalidRequest) as caught:
        release_team.commit(_text(MAX_OPS + 1))
    assert caught.value.code == "invalid_request"
    assert f"at most {MAX_OPS} operations" in caught.value.message
    assert not Frame.objects.filter(context=release_team.context).exists()


def test_the_text_is_not_read_past_the_first_operation_too_many(release_team):
    # A syntax error far beyond the limit: reading the whole text first would report it.
    with pytest.raises(InvalidRequest) as caught:
        release_team.commit(_text(20_000, tail=" (derive broken"))
    assert f"at most {MAX_OPS} operations" in caught.value.message
    assert caught.value.details == [{"line": 1, "column": caught.value.details[0]["column"]}]


def test_one_operation_too_many_in_json_is_refused_before_any_is_checked(release_team):
    # Every body value is a number (malformed): the count is what the error names.
    ops = [{"op": "derive", "id": f"f{i}", "body": {"n": i}} for i in range(20_000)]
    with pytest.raises(InvalidRequest) as caught:
        submit_transaction(release_team.context.pk, data={"ops": ops})
    assert f"at most {MAX_OPS} operations" in caught.value.message
    assert not Frame.objects.filter(context=release_team.context).exists()
