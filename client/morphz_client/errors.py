"""Typed errors: every non-2xx answer of the Morphz API becomes one of these.

The API always answers errors as ``{"error": {"code", "message", "details"}}``; the class is
chosen by the code first (a 409 `conflict` and a 409 `stale_cursor` need different handling)
and by the HTTP status otherwise.
"""

from __future__ import annotations

from typing import Any


class MorphzError(Exception):
    """Base of everything this client raises."""


class MorphzAPIError(MorphzError):
    """The server refused the request. `code` is stable; `details` is structured.
    `appended`: the events `append_events` wrote in batches before the refused one (else
    empty)."""

    def __init__(self, status: int, code: str, message: str, details: list[Any]) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.appended: list[Any] = []


class InvalidRequestError(MorphzAPIError):
    """400: malformed input (`invalid_request`, `invalid_cursor`, ...)."""


class ParseError(InvalidRequestError):
    """400 `parse_error`: `details` carry `line`, `column` and `expected`."""


class InvalidRefError(InvalidRequestError, ValueError):
    """400 `invalid_ref`, found before any request: not an event reference like `@e42`
    (the server's rule: `@e`, ASCII digits, no leading zero). Also a ValueError."""

    def __init__(self, ref: object) -> None:
        message = f'{ref!r} is not an event reference like "@e42"'
        super().__init__(400, "invalid_ref", message, [{"field": "ref"}])


class InvalidPathValueError(InvalidRequestError, ValueError):
    """400, found before any request: a value that goes into a URL path (a frame id, an
    evaluation id) is not one the server could have made, so it would name another
    resource (`../transactions`) or another query (`release/?as_of=1`). Also a ValueError."""

    def __init__(self, code: str, field: str, value: object, rule: str) -> None:
        super().__init__(400, code, f"{field} {value!r} is not {rule}", [{"field": field}])


class AuthError(MorphzAPIError):
    """401 / 403: no token, an unknown, revoked or expired token, or a missing CSRF token."""


class NotFoundError(MorphzAPIError):
    """404: unknown, or not reachable with this token."""


class ConflictError(MorphzAPIError):
    """409 `conflict`: `details` name each item changed since the base version."""


class StaleCursorError(MorphzAPIError):
    """409 `stale_cursor`: the memory changed (or the query differs); restart the recall."""


class StaleViewError(MorphzAPIError):
    """409 `stale_view`: the evaluation's view is older than the memory now."""


class MaintenanceRequiredError(MorphzAPIError):
    """409 `maintenance_required`: digest or slim memory before registering actions."""


class IdempotencyKeyReusedError(MorphzAPIError):
    """409 `idempotency_key_reused`: the key was used for a different request."""


class TooLargeError(MorphzAPIError):
    """413 `too_large`: the body is over the server's limit; nothing was written."""


class RuleViolationError(MorphzAPIError):
    """422: a transaction broke a rule; `details` list each failing operation's `index`."""


class ThrottledError(MorphzAPIError):
    """429 `throttled`: slow down; `details` say when to retry."""


class ServerError(MorphzAPIError):
    """5xx, or an answer that is not the API's JSON error shape."""


class DatabaseUnavailableError(ServerError):
    """503 `database_unavailable`: PostgreSQL is down; nothing was written, retry later."""


class TextOmittedError(MorphzError):
    """An evaluation was written (its inputs claimed) but its compiled `text` was too large for
    the server's response limit and left out (`text_omitted`): slim the memory (retire or
    digest frames), then evaluate again. `evaluation` is the answer, with its sizes."""

    def __init__(self, evaluation: dict[str, Any]) -> None:
        self.evaluation = evaluation
        super().__init__(
            f"evaluation {evaluation.get('id')} was written but its text "
            f"({evaluation.get('text_chars')} characters) is over the server's response limit "
            f"of {evaluation.get('limit_bytes')} bytes and was left out (text_omitted); "
            "slim the memory (retire or digest frames), then evaluate again"
        )


def prompt_text(evaluation: Any) -> str:
    """The prompt `text` of an evaluation's answer; TextOmittedError when the server left it
    out as too large."""
    text = evaluation.get("text")
    if text is None or evaluation.get("text_omitted"):
        raise TextOmittedError(dict(evaluation))
    return str(text)


BY_CODE: dict[str, type[MorphzAPIError]] = {
    "parse_error": ParseError,
    "conflict": ConflictError,
    "stale_cursor": StaleCursorError,
    "stale_view": StaleViewError,
    "maintenance_required": MaintenanceRequiredError,
    "idempotency_key_reused": IdempotencyKeyReusedError,
    "too_large": TooLargeError,
    "throttled": ThrottledError,
    "database_unavailable": DatabaseUnavailableError,
}
BY_STATUS: dict[int, type[MorphzAPIError]] = {
    400: InvalidRequestError,
    401: AuthError,
    403: AuthError,
    404: NotFoundError,
    409: ConflictError,
    413: TooLargeError,
    422: RuleViolationError,
    429: ThrottledError,
}


def error_for(status: int, body: Any) -> MorphzAPIError:
    """The error for an answer with HTTP `status` and JSON `body` (`{"error": {code, message,
    details}}`): the class by code first, then by status; ServerError for an answer not shaped
    like an error."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ServerError(status, "unexpected_response", f"HTTP {status}", [])
    code = str(error.get("code", "unknown"))
    message = str(error.get("message", ""))
    details = error.get("details") or []
    cls = BY_CODE.get(code) or BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else MorphzAPIError
    return cls(status, code, message, details if isinstance(details, list) else [details])
