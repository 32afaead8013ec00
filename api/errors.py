"""One error shape for the whole API: {"error": {"code", "message", "details"}} (R43)."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory.errors import MorphzError

STATUS_BY_CODE = {
    "parse_error": 400,
    "invalid_request": 400,
    "invalid_kind": 400,
    "not_found": 404,
    "conflict": 409,
    "stale_cursor": 409,
    "stale_view": 409,
    "maintenance_required": 409,
    "idempotency_key_reused": 409,
    "context_exists": 409,
    "too_large": 413,
}


def error_response(code: str, message: str, http_status: int, details: list[Any] | None = None) -> Response:
    return Response({"error": {"code": code, "message": message, "details": details or []}}, status=http_status)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, MorphzError):
        return error_response(exc.code, exc.message, STATUS_BY_CODE.get(exc.code, 422), exc.details)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        code = "not_authenticated"
    elif isinstance(exc, exceptions.PermissionDenied):
        code = "permission_denied"
    elif isinstance(exc, exceptions.NotFound):
        code = "not_found"
    elif isinstance(exc, exceptions.Throttled):
        code = "throttled"
    elif isinstance(exc, exceptions.MethodNotAllowed):
        code = "method_not_allowed"
    elif isinstance(exc, exceptions.UnsupportedMediaType):
        code = "unsupported_media_type"
    elif isinstance(exc, exceptions.ParseError):
        code = "invalid_request"
    elif response.status_code == status.HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        code = "too_large"
    else:
        code = "invalid_request"
    detail = response.data
    message = detail.get("detail") if isinstance(detail, dict) and "detail" in detail else "invalid request"
    details = [] if isinstance(detail, dict) and set(detail) == {"detail"} else [detail]
    response.data = {"error": {"code": code, "message": str(message), "details": details}}
    return response
