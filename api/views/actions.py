"""actions/ and actions/{seq}/cancel/: register an external action, cancel one (R25, R59)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key
from api.requests import body
from api.schema import WRITE_ERRORS, responses
from api.shapes import CancellationSerializer, EventSerializer
from api.views.common import IDEMPOTENCY_HEADER, event_answer
from memory.requests.events import ActionCancelIn, ActionIn
from memory.screening import screen
from memory.shapes.actions import cancellation_json
from memory.timeline.actions import cancel_action
from memory.timeline.events import register
from memory.vocabulary import event_ref


class ActionView(ContextAPIView):
    @extend_schema(
        tags=["actions"],
        operation_id="actions_register",
        summary="Register an external action before running it",
        description="Refused with 409 `maintenance_required` while the context is in "
        "maintenance (R25). The action stays open until a `tool_result` names it in "
        "`delivers`.",
        request=ActionIn,
        parameters=[IDEMPOTENCY_HEADER],
        responses=responses({201: EventSerializer, 200: EventSerializer}, *WRITE_ERRORS, 409),
    )
    def post(self, request: Request, slug: str) -> Response:
        action = body(ActionIn, request.data)
        fields, _notes = screen(self.ctx.screening, {"arguments": action.arguments})
        key = idempotency_key(request, action.idempotency_key)
        action = action.model_copy(
            update={"arguments": fields["arguments"], "idempotency_key": key}
        )
        result = register(self.ctx.pk, action)
        return Response(
            event_answer(result.event, created=result.created),
            status=201 if result.created else 200,
        )


class ActionCancelView(ContextAPIView):
    @extend_schema(
        tags=["agents"],
        operation_id="action_cancel",
        summary="Cancel a pending action",
        description='Appends a `tool_result` delivering the action, "cancelled by {who}: '
        '{reason}", so it leaves the pending actions and the model reads why (R59). '
        "`not_an_action`, `action_not_pending` (already delivered or cancelled), "
        "`unknown_ref`.",
        request=ActionCancelIn,
        responses=responses({201: CancellationSerializer}, *WRITE_ERRORS, 409, 422),
    )
    def post(self, request: Request, slug: str, seq: int) -> Response:
        cancel = body(ActionCancelIn, request.data)
        ref = event_ref(seq)
        event = cancel_action(self.ctx.pk, ref, reason=cancel.reason, by=self.author().label)
        return Response(cancellation_json(event.ref, ref), status=201)
