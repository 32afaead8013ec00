"""One error shape for the whole API: {"error": {"code", "message", "details"}} (R43).

Every failure a client can cause ends here with a stable code and the HTTP status section 7
names. Database errors caused by values that slipped past validation become 400s rather than
500s, so a hostile input can never crash the service into an HTML error page.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DataError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory.errors import MorphzError

log = logging.getLogger(__name__)

STATUS_BY_CODE = {
    "parse_error": 400,
    "invalid_request": 400,
    "invalid_kind": 400,
    "invalid_cursor": 400,
    "invalid_base_version": 400,
    "unknown_evaluation": 400,
    "invalid_ref": 400,
    "invalid_offset": 400,
    "invalid_length": 400,
    "not_authenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "stale_cursor": 409,
    "stale_view": 409,
    "maintenance_required": 409,
    "idempotency_key_reused": 409,
    "context_exists": 409,
    "context_frozen": 409,
    "too_large": 413,
    "unsupported_media_type": 415,
    "throttled": 429,
}
# Codes a transaction gets when it breaks a rule: any other memory code is a rule, so 422.
RULE_STATUS = 422


def status_for(code: str) -> int:
    if code in STATUS_BY_CODE:
        return STATUS_BY_CODE[code]
    # memory's input checks name the field: invalid_depth, invalid_query, invalid_time, ...
    if code.startswith("invalid_"):
        return 400
    return RULE_STATUS


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


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, MorphzError):
        return error_response(exc.code, exc.message, details=exc.details)
    if isinstance(exc, ApiError):
        return error_response(exc.code, exc.message, exc.status_code, exc.details)
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
