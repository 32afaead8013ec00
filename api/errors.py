"""One error shape for the whole API: {"error": {"code", "message", "details"}} (R43).

Every failure a client can cause ends here with a stable `ErrorCode` and the HTTP status that
code declares (docs/rest.md lists them). Database errors caused by values
that slipped past validation become 400s rather than 500s, so a hostile input can never
crash the service into an HTML error page.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg.errors
from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.db import DataError, InterfaceError, OperationalError, ProgrammingError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory.errors import ErrorCode, MorphzError
from memory.requests.refusals import validation_code, with_reasons
from memory.shapes.errors import FieldProblem, error_body
from morphz.database_hint import database_hint

log = logging.getLogger(__name__)

# The error registry, derived from `ErrorCode` (memory/errors.py), which declares every code a
# client can meet with the HTTP status of a response that carries it as `error.code`.
STATUS_BY_CODE: dict[str, int] = {code.value: code.status for code in ErrorCode}
# Seconds a client should wait before retrying while PostgreSQL is unreachable.
RETRY_AFTER_SECONDS = 1


def error_response(code: ErrorCode, message: str, details: list[Any] | None = None) -> Response:
    """The error body for `code` with the HTTP status the code declares."""
    return Response(error_body(code, message, details), status=code.status)


class ApiError(exceptions.APIException):
    """An error raised by the API layer itself, with its code and details."""

    def __init__(self, code: ErrorCode, message: str, details: list[Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or []
        self.status_code = code.status


class TooLarge(ApiError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            ErrorCode.TOO_LARGE,
            f"request body is larger than {limit} bytes; nothing was written",
            [{"limit_bytes": limit}],
        )


def validation_details(detail: Any, prefix: str = "") -> list[FieldProblem]:
    """Flatten DRF's nested validation errors into [{"field": "a.b", "message": ...}]."""
    out: list[FieldProblem] = []
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


_DRF_CODES: list[tuple[type[exceptions.APIException], ErrorCode]] = [
    (exceptions.NotAuthenticated, ErrorCode.NOT_AUTHENTICATED),
    (exceptions.AuthenticationFailed, ErrorCode.NOT_AUTHENTICATED),
    (exceptions.PermissionDenied, ErrorCode.PERMISSION_DENIED),
    (exceptions.NotFound, ErrorCode.NOT_FOUND),
    (exceptions.Throttled, ErrorCode.THROTTLED),
    (exceptions.MethodNotAllowed, ErrorCode.METHOD_NOT_ALLOWED),
    (exceptions.UnsupportedMediaType, ErrorCode.UNSUPPORTED_MEDIA_TYPE),
    (exceptions.NotAcceptable, ErrorCode.NOT_ACCEPTABLE),
    (exceptions.ParseError, ErrorCode.INVALID_REQUEST),
    (exceptions.ValidationError, ErrorCode.INVALID_REQUEST),
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


def schema_behind(exc: BaseException) -> bool:
    """Whether `exc` means the database lacks a table or column this code reads: migrations
    not applied (a server started by hand, not by `serve`, which refuses such a database)."""
    cause = exc.__cause__
    undefined = (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn)
    return isinstance(exc, ProgrammingError) and isinstance(cause, undefined)


MIGRATIONS_PENDING_MESSAGE = (
    "the database lacks tables or migrations this code needs: run `manage.py migrate` "
    "(the server log names the database)"
)


def migrations_pending_response() -> Response:
    return error_response(ErrorCode.MIGRATIONS_PENDING, MIGRATIONS_PENDING_MESSAGE)


def unavailable_response() -> Response:
    response = error_response(
        ErrorCode.DATABASE_UNAVAILABLE,
        "the database is unavailable; nothing was written, retry shortly",
        [{"retry_after_seconds": RETRY_AFTER_SECONDS}],
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if database_unavailable(exc):
        log.warning("database unavailable: %s", exc)
        return unavailable_response()
    if schema_behind(exc):
        log.error("%s", database_hint(exc))
        return migrations_pending_response()
    if isinstance(exc, MorphzError | ApiError):
        return error_response(exc.code, exc.message, exc.details)
    if isinstance(exc, TooManyFieldsSent):
        return error_response(
            ErrorCode.INVALID_REQUEST,
            f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} parameters in the request",
        )
    if isinstance(exc, DataError):
        # A value PostgreSQL refuses (out of range, NUL byte, ...) is the client's input.
        log.warning("database refused a value: %s", exc)
        return error_response(ErrorCode.INVALID_REQUEST, "a value in the request cannot be stored")
    response = drf_exception_handler(exc, context)
    if response is None:
        log.exception("unhandled error in API view", exc_info=exc)
        return error_response(ErrorCode.INTERNAL_ERROR, "internal error; it has been logged")
    code = next((c for cls, c in _DRF_CODES if isinstance(exc, cls)), ErrorCode.INVALID_REQUEST)
    if response.status_code == status.HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        code = ErrorCode.TOO_LARGE
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        message = "the request is invalid; see details"
        details: list[Any] = with_reasons(validation_details(detail))
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
