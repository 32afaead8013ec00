"""An evaluation's answer within MAX_RESPONSE_BYTES, however large the compiled input.

How it works: docs/internals.md, section `api/bounds.py`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.renderers import JSONRenderer


def answer_bytes(data: Any) -> int:
    """The size of `data` as the API renders it."""
    return len(JSONRenderer().render(data))


def bounded_input(answer: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    """A copy of `answer` within MAX_RESPONSE_BYTES: the compiled input (`context`, `text`)
    is held by `answer` itself, or by `answer[key]` (an evaluation read back holds it in
    `input`); `context`, then `text`, become null when they do not fit."""
    answer = dict(answer)
    held = answer
    if key is not None:
        held = answer[key] = dict(answer[key])
    held.update(context_omitted=False, text_omitted=False)
    limit = settings.MAX_RESPONSE_BYTES
    size = answer_bytes(answer)
    if size <= limit:
        return answer
    held.update(context=None, context_omitted=True, answer_bytes=size, limit_bytes=limit)
    if answer_bytes(answer) <= limit:
        return answer
    text = held.get("text")
    held.update(text=None, text_omitted=True, text_chars=len(text or ""))
    return answer
