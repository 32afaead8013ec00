"""contexts/ and contexts/{slug}/: list, read, freeze or unfreeze, screening (R37, R53)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ApiView, ContextAPIView
from api.errors import ApiError
from api.requests import body
from api.schema import READ_ERRORS, WRITE_ERRORS, responses
from api.shapes import ContextListSerializer, ContextSerializer
from api.views.common import visible_contexts
from memory.contexts import set_frozen, set_screening
from memory.errors import ErrorCode
from memory.requests.contexts import ContextPatchIn
from memory.scopes import ADMIN
from memory.shapes import context_json

TAG_CONTEXT = ["context"]


class ContextListView(ApiView):
    @extend_schema(
        tags=TAG_CONTEXT,
        operation_id="contexts_list",
        summary="Contexts the caller can use",
        description="A token sees its own context; a staff person sees every context.",
        responses=responses({200: ContextListSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request) -> Response:
        return Response({"contexts": [context_json(c) for c in visible_contexts(request)]})


class ContextDetailView(ContextAPIView):
    @extend_schema(
        tags=TAG_CONTEXT,
        operation_id="context_read",
        summary="The context: version, tick, settings, pressure",
        responses=responses({200: ContextSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(context_json(self.ctx))

    @extend_schema(
        tags=TAG_CONTEXT,
        operation_id="context_update",
        summary="Freeze or unfreeze the context",
        description='`{"frozen": true}`: every write (events, evaluations, transactions, '
        "actions, recall as observation) is refused with 409 `context_frozen` and writes "
        "nothing; reads, recall, search and forks still work.",
        request=ContextPatchIn,
        responses=responses({200: ContextSerializer}, *WRITE_ERRORS),
    )
    def patch(self, request: Request, slug: str) -> Response:
        """Freeze (agent scope), unfreeze a frozen context or change screening (admin)."""
        change = body(ContextPatchIn, request.data)
        if change.frozen is None and change.screening is None:
            raise ApiError(
                ErrorCode.INVALID_REQUEST, "give frozen or screening", [{"field": "frozen"}]
            )
        if change.frozen is False and self.ctx.frozen:
            self.require(ADMIN, "unfreeze the context")
        if change.screening is not None:
            self.require(ADMIN, "change the context's screening")
        context = self.ctx
        if change.frozen is not None:
            context = set_frozen(self.ctx.pk, change.frozen)
        if change.screening is not None:
            context = set_screening(self.ctx.pk, change.screening)
        return Response(context_json(context))
