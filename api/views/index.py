"""The API's index and its answer for any other URL under /api/."""

from __future__ import annotations

from typing import Any

from django.urls import Resolver404, resolve
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ApiView
from api.errors import error_response
from api.schema import responses
from api.shapes import ApiIndexSerializer
from api.views.common import visible_contexts
from memory.errors import ErrorCode


def not_found_message(path: str) -> str:
    """Names the path, and the path with a slash when only the slash is missing (API paths
    end with one; a redirect would drop a POST body)."""
    if not path.endswith("/"):
        try:
            match = resolve(path + "/")
        except Resolver404:
            match = None
        if match is not None and match.url_name != "api-not-found":
            return f"no API endpoint at {path}; API paths end with a slash: {path}/"
    return f"no API endpoint at {path}"


class ApiIndexView(ApiView):
    permission_classes = [permissions.AllowAny]
    throttle_classes: list[Any] = []

    @extend_schema(
        tags=["index"],
        operation_id="api_index",
        summary="Where things are",
        description="Links to the schema and docs, and the contexts the caller can use.",
        responses=responses({200: ApiIndexSerializer}, 401, 429),
        auth=[],
    )
    def get(self, request: Request) -> Response:
        slugs = [context.slug for context in visible_contexts(request)]
        return Response(
            {
                "version": "v1",
                "schema": "/api/schema/",
                "docs": "/api/docs/",
                "contexts": [f"/api/v1/contexts/{slug}/" for slug in slugs],
            }
        )


class ApiNotFoundView(ApiView):
    """Any other URL under /api/: the standard error shape, never an HTML page."""

    permission_classes = [permissions.AllowAny]
    throttle_classes: list[Any] = []
    schema = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        pass

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        self.args, self.kwargs = args, kwargs
        self.request = self.initialize_request(request, *args, **kwargs)
        self.headers = self.default_response_headers
        response = error_response(ErrorCode.NOT_FOUND, not_found_message(request.path))
        self.response = self.finalize_response(self.request, response, *args, **kwargs)
        return self.response
