"""Text fields refuse lone surrogates naming the code point, checked by one search however
long the text is; text without them passes unchanged (nothing trimmed or normalised)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memory.errors import MorphzError
from memory.requests.events import EventAppendIn
from memory.requests.model import StrictModel
from memory.requests.strict import Name, Text


class Note(StrictModel):
    text: Text
    name: Name


@pytest.mark.parametrize("field", ["text", "name"])
def test_a_lone_surrogate_is_refused_with_its_code_point(field: str) -> None:
    values = {"text": "ok", "name": "ok", field: "ok " * 20_000 + "\udc80"}
    with pytest.raises(MorphzError) as raised:
        Note.read(values)
    assert raised.value.code == "invalid_request"
    (detail,) = raised.value.details
    assert detail["field"] == field
    assert "U+DC80" in detail["message"]


def test_event_content_refuses_a_lone_surrogate_too() -> None:
    with pytest.raises(ValidationError) as raised:
        EventAppendIn.model_validate({"kind": "tool_result", "content": "a\ud800"})
    assert [e["type"] for e in raised.value.errors()] == ["surrogate_characters_not_allowed"]


def test_text_without_surrogates_passes_unchanged() -> None:
    note = Note.model_validate({"text": " héllo 世界 🙂 ", "name": "\tx"})
    assert (note.text, note.name) == (" héllo 世界 🙂 ", "\tx")
