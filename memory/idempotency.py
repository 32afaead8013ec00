"""Idempotency keys (R49), one rule for every write that takes one.

A key is text of 1-KEY_MAX characters (a reply's at most REPLY_KEY_MAX, leaving room for the
suffix naming each part it writes). A write under a key already used answers what the first
write did when it is the same request (its fingerprint, or the stored row, compares equal),
and is refused 409 `idempotency_key_reused` when it is another: a key names one request.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Final

from pydantic import AfterValidator, Field

from memory.errors import Conflict, ErrorCode, InvalidRequest
from memory.requests.strict import text_problem

KEY_MAX: Final = 200  # the column (memory.models: idempotency_key)
REPLY_KEY_MAX: Final = KEY_MAX - 20  # room for the part suffix (memory.agents.commits.part_key)

KEY_HELP: Final = (
    "a retry with the same key returns the first result and writes nothing "
    "(the Idempotency-Key header works too)"
)


def check_key(key: Any, max_chars: int = KEY_MAX, field: str = "idempotency_key") -> str | None:
    """`key` when it is None or text of 1-`max_chars` characters PostgreSQL can store;
    InvalidRequest naming `field` otherwise."""
    if key is None:
        return None
    if not isinstance(key, str) or not 0 < len(key) <= max_chars:
        raise InvalidRequest(
            f"{field} must be a string of 1-{max_chars} characters", details=[{"field": field}]
        )
    problem = text_problem(key)
    if problem is not None:
        raise InvalidRequest(f"{field}: {problem}", details=[{"field": field}])
    return key


def _checked(max_chars: int) -> Any:
    return AfterValidator(lambda key: check_key(key, max_chars))


# The key as a request model declares it.
Key = Annotated[str, Field(min_length=1, max_length=KEY_MAX), _checked(KEY_MAX)]
ReplyKey = Annotated[str, Field(min_length=1, max_length=REPLY_KEY_MAX), _checked(REPLY_KEY_MAX)]


def fingerprint(**request: Any) -> str:
    """What a retry must repeat to count as the same request: a hash of its canonical JSON
    (keys sorted, so their order never matters)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def reused(key: str, what: str, details: list[Any] | None = None, where: str = "") -> Conflict:
    """The refusal of `key` used again for another request: `what` names the first one,
    `where` the part of this request that used it (`events[3]: `)."""
    message = f"{where}idempotency_key {key!r} was already used for {what}"
    return Conflict(message, code=ErrorCode.IDEMPOTENCY_KEY_REUSED, details=details)


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same: objects whatever their key order, numbers by
    value (`1E2` is `100`), but a boolean is not a number (`true` is not `1`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
