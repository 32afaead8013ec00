"""health/: whether this process serves (live) and whether it can serve memory (ready).

For load balancers and orchestrators (docs/production.md, "Health checks"): no token, no
throttle, and nothing about the deployment in the answer (the server log names the database
and the fix)."""

from __future__ import annotations

import logging
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ApiView
from api.errors import migrations_pending_response, unavailable_response
from api.schema import responses
from api.shapes import HealthSerializer
from memory.shapes.health import Health
from morphz.database_hint import UNREACHABLE, find_database_problem

log = logging.getLogger(__name__)


class HealthView(ApiView):
    # A probe sends no token and must never be refused for sending one, or for asking often.
    authentication_classes: list[Any] = []
    permission_classes = [permissions.AllowAny]
    throttle_classes: list[Any] = []


class LiveView(HealthView):
    @extend_schema(
        tags=["health"],
        operation_id="health_live",
        summary="Whether this process serves",
        description="200 while this process answers HTTP. Touches no database, so a "
        "database outage never gets a serving process restarted.",
        responses=responses({200: HealthSerializer}),
        auth=[],
    )
    def get(self, request: Request) -> Response:
        return Response(Health(status="live"))


class ReadyView(HealthView):
    @extend_schema(
        tags=["health"],
        operation_id="health_ready",
        summary="Whether this process can serve memory",
        description="200 when the database is reachable and has every migration of this "
        "code; else 503 `database_unavailable` (unreachable within the connect timeout "
        "requests use) or `migrations_pending` (run `manage.py migrate`). One direct "
        "connection and one query per call.",
        responses=responses({200: HealthSerializer}, 503),
        auth=[],
    )
    def get(self, request: Request) -> Response:
        problem = find_database_problem()
        if problem is None:
            return Response(Health(status="ready"))
        log.warning("not ready: %s", problem.line)
        if problem.kind == UNREACHABLE:
            return unavailable_response()
        return migrations_pending_response()
