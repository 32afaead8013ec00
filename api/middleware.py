"""Django middleware at the edge of the API."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse

from api.errors import error_body


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
                    error_body("invalid_host", message, [{"field": "Host"}]), status=400
                )
        return self.get_response(request)
