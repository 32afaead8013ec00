"""A transaction states its thread in one place, and its JSON form meets the size limit of
its text form: a `thread` beside a text that declares another is 400 `invalid_thread`, a
JSON form whose text would pass the limit is 413 `too_large`; nothing is written either way."""

from __future__ import annotations

import pytest

from memory.models import Frame, TransactionRecord
from tests.api.conftest import Api, error_of


def test_a_thread_beside_a_text_declaring_another_is_refused(api: Api) -> None:
    text = "(context-tx (thread t1) (derive h10 (a b)))"
    response = api.post("transactions/", {"text": text, "thread": "t2"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_thread"
    assert error["details"] == [{"field": "thread"}]
    assert not Frame.objects.filter(frame_id="h10").exists()


def test_the_same_thread_in_both_places_commits_on_it(api: Api) -> None:
    text = "(context-tx (thread t1) (derive h10 (a b)))"
    response = api.post("transactions/", {"text": text, "thread": "t1"})
    assert response.status_code == 201
    assert TransactionRecord.objects.get(status="committed").thread == "t1"


def test_a_json_form_over_the_text_limit_is_too_large(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory.tx.submission.MAX_CONTENT_CHARS", 1000)
    ops = [{"op": "derive", "id": "big", "body": {"a": "q" * 2000}}]
    response = api.post("transactions/", {"ops": ops})
    assert response.status_code == 413
    assert error_of(response)["code"] == "too_large"
    assert not Frame.objects.filter(frame_id="big").exists()
    small = [{"op": "derive", "id": "small", "body": {"a": "q" * 100}}]
    assert api.post("transactions/", {"ops": small}).status_code == 201
