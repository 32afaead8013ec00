"""One idempotency key rule (`memory.idempotency`): text of 1-200 characters (a reply's
1-180), the same whether a domain function checks it or a request model reads it."""

from __future__ import annotations

from typing import Any

import pytest

from memory.errors import MorphzError
from memory.idempotency import KEY_MAX, REPLY_KEY_MAX, check_key
from memory.requests.agents import ReplyIn
from memory.requests.events import EvaluationIn

BAD_KEYS: list[Any] = ["", "k" * (KEY_MAX + 1), 7, True, "k\x00"]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_the_domain_and_the_model_refuse_the_same_keys(key: Any) -> None:
    with pytest.raises(MorphzError) as checked:
        check_key(key)
    with pytest.raises(MorphzError) as read:
        EvaluationIn.read({"idempotency_key": key})
    assert checked.value.code == read.value.code == "invalid_request"
    assert checked.value.details[0]["field"] == read.value.details[0]["field"]


@pytest.mark.parametrize("key", ["k", "k" * KEY_MAX, " padded "])
def test_a_good_key_is_kept_as_written(key: str) -> None:
    assert check_key(key) == key
    assert EvaluationIn.read({"idempotency_key": key}).idempotency_key == key


def test_a_reply_key_leaves_room_for_its_parts() -> None:
    assert ReplyIn.read({"idempotency_key": "k" * REPLY_KEY_MAX}).idempotency_key
    with pytest.raises(MorphzError):
        ReplyIn.read({"idempotency_key": "k" * (REPLY_KEY_MAX + 1)})
    with pytest.raises(MorphzError):
        check_key("k" * (REPLY_KEY_MAX + 1), REPLY_KEY_MAX)
