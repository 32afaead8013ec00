"""An evaluation's answer within MAX_RESPONSE_BYTES, however large the compiled input.

How it works: docs/internals.md, section `api/bounds.py`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.renderers import JSONRenderer


def answer_bytes(data: Any) -> int:
    """The size of `data` as the API renders it."""
    return len(JSONRenderer().render(data))


def bounded_input(answer: Mapping[str, Any], key: str | None = None) -> dict[str, Any]:
    """A copy of `answer` within MAX_RESPONSE_BYTES: the compiled input (`context`, `text`)
    is held by `answer` itself, or by `answer[key]` (an evaluation read back holds it in
    `input`); `context`, then `text`, become null when they do not fit."""
    copy = dict(answer)
    held = copy
    if key is not None:
        held = copy[key] = dict(copy[key])
    held.update(context_omitted=False, text_omitted=False)
    limit = settings.MAX_RESPONSE_BYTES
    size = answer_bytes(copy)
    if size <= limit:
        return copy
    held.update(context=None, context_omitted=True, answer_bytes=size, limit_bytes=limit)
    if answer_bytes(copy) <= limit:
        return copy
    text = held.get("text")
    held.update(text=None, text_omitted=True, text_chars=len(text or ""))
    return copy
