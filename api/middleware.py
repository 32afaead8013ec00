"""Django middleware at the edge of the API.

How it works: docs/internals.md, section `api/middleware.py`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse

from api.errors import RETRY_AFTER_SECONDS, database_unavailable, error_body
from memory.errors import ErrorCode


class ApiHostMiddleware:
    """A Host header that ALLOWED_HOSTS refuses answers the API's JSON error shape on /api/
    (400 `invalid_host`) instead of Django's HTML page. First in MIDDLEWARE, so no other
    middleware has asked for the host yet."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            try:
                request.get_host()
            except DisallowedHost:
                host = request.META.get("HTTP_HOST", "")[:200]
                message = f"the Host header {host!r} is not one this server answers for"
                return JsonResponse(
                    error_body(ErrorCode.INVALID_HOST, message, [{"field": "Host"}]), status=400
                )
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not database_unavailable(exc):
            return None
        if request.path.startswith("/api/"):
            body: Any = error_body(
                ErrorCode.DATABASE_UNAVAILABLE,
                "the database is unavailable; nothing was written, retry shortly",
                [{"retry_after_seconds": RETRY_AFTER_SECONDS}],
            )
            response = HttpResponse(json.dumps(body), status=503, content_type="application/json")
        else:
            response = HttpResponse(
                "The database is unavailable; retry shortly.\n",
                status=503,
                content_type="text/plain; charset=utf-8",
            )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


class ResponseCapMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        limit = settings.MAX_RESPONSE_BYTES
        if (
            request.path.startswith("/api/")
            and not response.streaming
            and len(response.content) > limit
        ):
            size = len(response.content)
            body = error_body(
                ErrorCode.TOO_LARGE,
                f"the answer would be {size} bytes, over the limit of {limit}; "
                "ask for less (a smaller page or limit, or read large items on their own)",
                [{"response_bytes": size, "limit_bytes": limit}],
            )
            return HttpResponse(json.dumps(body), status=413, content_type="application/json")
        return response
