"""A database outage outside the REST views (explorer pages, admin, anything not handled by
the API's exception handler) answers 503 too: JSON under /api/, plain text elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from api.errors import RETRY_AFTER_SECONDS, database_unavailable, error_body


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
                "database_unavailable",
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
