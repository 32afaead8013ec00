"""The API's one body parser: JSON, bounded in size, refusing values PostgreSQL cannot store.

Checked here once, so no view can hand the database a NUL byte, a lone surrogate, an
infinite float or a structure deep enough to exhaust the stack.
"""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from rest_framework.parsers import BaseParser

from api.errors import ApiError, TooLarge
from memory.errors import ErrorCode, MorphzError
from memory.requests.strict import text_problem
from memory.strictjson import MAX_DEPTH, TOO_DEEP, read_json


def check_value(value: Any) -> None:
    """Raise ApiError when `value` holds something the database cannot store."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ApiError(ErrorCode.INVALID_REQUEST, TOO_DEEP, [{"max_depth": MAX_DEPTH}])
        if isinstance(item, str):
            check_text(item, path)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ApiError(
                    ErrorCode.INVALID_REQUEST,
                    f"{path or 'body'}: number out of range",
                    [{"field": path}],
                )
        elif isinstance(item, dict):
            for key, child in item.items():
                check_text(key, path)
                stack.append((child, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def check_text(text: str, field: str) -> None:
    """ApiError `invalid_request` when `text` holds NUL or a lone surrogate (PostgreSQL
    stores neither)."""
    problem = text_problem(text)
    if problem is not None:
        raise ApiError(
            ErrorCode.INVALID_REQUEST, f"{field or 'body'}: {problem}", [{"field": field}]
        )


def read_limited(stream: Any) -> bytes:
    limit = settings.MAX_REQUEST_BYTES
    raw = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise TooLarge(limit)
    return raw


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = read_limited(stream)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ApiError(
                ErrorCode.INVALID_REQUEST, f"body is not UTF-8 (byte {exc.start})"
            ) from None
        try:
            data = read_json(text)
        except MorphzError as exc:  # raised here as the API's own error, as DRF expects
            raise ApiError(exc.code, exc.message, exc.details) from None
        check_value(data)
        return data
