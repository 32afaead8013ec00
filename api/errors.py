"""One error shape for the whole API: {"error": {"code", "message", "details"}} (R43).

Every failure a client can cause ends here with a stable code and the HTTP status that
`STATUS_BY_CODE` below gives it (docs/rest.md lists them). Database errors caused by values
that slipped past validation become 400s rather than 500s, so a hostile input can never
crash the service into an HTML error page.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.db import DataError, InterfaceError, OperationalError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory.errors import MorphzError
from memory.requests.refusals import validation_code

log = logging.getLogger(__name__)

# The error registry: every code a client can meet, with the HTTP status of a response that
# carries it as `error.code`. A rejected transaction answers with its first failing operation's
# code (422) and lists every failing operation in `details`.
# docs/transactions.md and docs/rest.md say what each code means and what to do about it.
# A code missing here is a programming error: tests/api/test_error_registry.py reads every code
# the source raises and fails on an unlisted one (at run time it would answer 500).
STATUS_BY_CODE: dict[str, int] = {
    # 400: the request itself is malformed
    "parse_error": 400,
    "invalid_request": 400,
    "invalid_kind": 400,
    "invalid_cursor": 400,
    "invalid_base_version": 400,
    "invalid_ref": 400,
    "invalid_offset": 400,
    "invalid_length": 400,
    "invalid_host": 400,
    "invalid_depth": 400,
    "invalid_direction": 400,
    "invalid_flag": 400,
    "invalid_frame_id": 400,
    "invalid_limit": 400,
    "invalid_max_nodes": 400,
    "invalid_query": 400,
    "invalid_status": 400,
    "invalid_thread": 400,
    "invalid_time": 400,
    "invalid_type": 400,
    "invalid_view_version": 400,
    "invalid_arguments": 400,
    "unknown_evaluation": 400,
    "invalid_version": 400,
    "invalid_export": 400,
    "invalid_signature": 400,
    "conflicting_filters": 400,
    # 401, 403, 404, 405, 406: who may ask what
    "not_authenticated": 401,
    "permission_denied": 403,
    "scope_insufficient": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "not_acceptable": 406,
    # 409: the state moved or forbids it now; re-read and retry
    "conflict": 409,
    "stale_cursor": 409,
    "stale_view": 409,
    "maintenance_required": 409,
    "idempotency_key_reused": 409,
    "context_exists": 409,
    "context_frozen": 409,
    # 413, 415, 429: size, media type, rate
    "too_large": 413,
    "unsupported_media_type": 415,
    "throttled": 429,
    # 422: a transaction or an append broke a rule
    "rule_violation": 422,
    "unknown_ref": 422,
    "unknown_relation": 422,
    "self_citation": 422,
    "frame_exists": 422,
    "frame_retired": 422,
    "frame_protected": 422,
    "relation_exists": 422,
    "not_observation": 422,
    "request_pending": 422,
    # A reply taken apart (R57, R59; docs/agents.md): refusals of one part of a reply, and
    # a pending action's cancellation
    "unknown_tool": 400,
    "duplicate_transaction": 409,
    "reply_rejected": 409,
    "not_an_action": 422,
    "action_not_pending": 409,
    "not_erasable": 422,
    "secret_detected": 422,
    # 500: our fault, logged
    "internal_error": 500,
    # 503: PostgreSQL unreachable; nothing was written
    "database_unavailable": 503,
}
# Seconds a client should wait before retrying while PostgreSQL is unreachable.
RETRY_AFTER_SECONDS = 1


def status_for(code: str) -> int:
    """The HTTP status of `code`; an unlisted code is a bug, answered as 500 and logged."""
    status_code = STATUS_BY_CODE.get(code)
    if status_code is None:
        log.error("error code %r is not in api.errors.STATUS_BY_CODE", code)
        return 500
    return status_code


def error_body(code: str, message: str, details: list[Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or []}}


def error_response(
    code: str, message: str, http_status: int | None = None, details: list[Any] | None = None
) -> Response:
    return Response(error_body(code, message, details), status=http_status or status_for(code))


class ApiError(exceptions.APIException):
    """An error raised by the API layer itself, with its code and details."""

    def __init__(self, code: str, message: str, details: list[Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or []
        self.status_code = status_for(code)


class TooLarge(ApiError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            "too_large",
            f"request body is larger than {limit} bytes; nothing was written",
            [{"limit_bytes": limit}],
        )


def validation_details(detail: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Flatten DRF's nested validation errors into [{"field": "a.b", "message": ...}]."""
    out: list[dict[str, Any]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = (
                prefix if key == "non_field_errors" else (f"{prefix}.{key}" if prefix else str(key))
            )
            out.extend(validation_details(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            out.extend({"field": prefix, "message": str(item)} for item in detail)
        else:
            for index, item in enumerate(detail):
                out.extend(validation_details(item, f"{prefix}[{index}]"))
    else:
        out.append({"field": prefix, "message": str(detail)})
    return out


_DRF_CODES: list[tuple[type[exceptions.APIException], str]] = [
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "not_authenticated"),
    (exceptions.PermissionDenied, "permission_denied"),
    (exceptions.NotFound, "not_found"),
    (exceptions.Throttled, "throttled"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.ParseError, "invalid_request"),
    (exceptions.ValidationError, "invalid_request"),
]


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` means PostgreSQL cannot be reached (down, restarting, connection lost),
    as opposed to an error in a statement: those keep their own handling."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    state = getattr(exc.__cause__, "sqlstate", None)
    # No SQLSTATE: the connection failed or the pool timed out; 08xxx connection exceptions;
    # 57P01-57P03 the server shutting down, crashed or starting.
    return state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")


def unavailable_response() -> Response:
    response = error_response(
        "database_unavailable",
        "the database is unavailable; nothing was written, retry shortly",
        503,
        [{"retry_after_seconds": RETRY_AFTER_SECONDS}],
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if database_unavailable(exc):
        log.warning("database unavailable: %s", exc)
        return unavailable_response()
    if isinstance(exc, MorphzError):
        return error_response(exc.code, exc.message, details=exc.details)
    if isinstance(exc, ApiError):
        return error_response(exc.code, exc.message, exc.status_code, exc.details)
    if isinstance(exc, TooManyFieldsSent):
        return error_response(
            "invalid_request",
            f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} parameters in the request",
            400,
        )
    if isinstance(exc, DataError):
        # A value PostgreSQL refuses (out of range, NUL byte, ...) is the client's input.
        log.warning("database refused a value: %s", exc)
        return error_response("invalid_request", "a value in the request cannot be stored", 400)
    response = drf_exception_handler(exc, context)
    if response is None:
        log.exception("unhandled error in API view", exc_info=exc)
        return error_response("internal_error", "internal error; it has been logged", 500)
    code = next((c for cls, c in _DRF_CODES if isinstance(exc, cls)), "invalid_request")
    if response.status_code == status.HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        code = "too_large"
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        message = "the request is invalid; see details"
        details: list[Any] = validation_details(detail)
        code = validation_code(details)
        if details and details[0].get("message"):
            first = details[0]
            message = (
                f"{first['field']}: {first['message']}" if first["field"] else first["message"]
            )
    else:
        message = (
            str(detail.get("detail"))
            if isinstance(detail, dict) and "detail" in detail
            else str(exc)
        )
        details = []
    wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
    if wait is not None:
        details = [{"retry_after_seconds": round(wait, 3)}]
    response.data = error_body(code, message, details)
    return response
