"""Two guards around every request.

- A database outage outside the REST views (explorer pages, admin, anything not handled by
  the API's exception handler) answers 503 too: JSON under /api/, plain text elsewhere.
- No API answer is larger than MAX_RESPONSE_BYTES: a larger one is replaced by 413
  `too_large` naming both sizes (never cut silently). The views page and bound their answers
  well below the limit; this is the net under them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
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
                "too_large",
                f"the answer would be {size} bytes, over the limit of {limit}; "
                "ask for less (a smaller page or limit, or read large items on their own)",
                [{"response_bytes": size, "limit_bytes": limit}],
            )
            return HttpResponse(json.dumps(body), status=413, content_type="application/json")
        return response
