"""replies/: take a model reply apart into transactions, reads, actions and a message (R46)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key
from api.schema import WRITE_ERRORS, responses
from api.serializers import ReplyIn, body_data
from memory.agents.replies import take_apart_reply


class ReplyResultSerializer(serializers.Serializer):
    transactions = serializers.ListField(child=serializers.JSONField())
    reads = serializers.ListField(child=serializers.JSONField())
    actions = serializers.ListField(child=serializers.JSONField())
    message = serializers.JSONField(allow_null=True)
    rejected = serializers.BooleanField(
        help_text="a transaction was rejected: the actions and message were withheld"
    )
    conflict = serializers.BooleanField()
    hints = serializers.ListField(child=serializers.CharField())
    version = serializers.IntegerField()
    tick = serializers.IntegerField()
    feedback = serializers.CharField(help_text="what the model should read next")


class ReplyView(ContextAPIView):
    @extend_schema(
        tags=["agents"],
        operation_id="replies_take_apart",
        summary="Take a model reply apart",
        description="Commits the reply's transactions (a `context_tx` tool call or a "
        "`(context-tx ...)` form in the text), runs its memory reads (results enter as "
        "`recall_result` observations), registers every other tool call as an action "
        "(refused in maintenance) and records the text as an `agent_message` with "
        "`delivers` (the markers removed from the text). A reply is one unit: when a "
        "transaction is rejected its actions and message are withheld (`on_rejection: "
        "proceed` writes them anyway); the memory reads run. A transaction given twice "
        "commits once. `feedback` is what the model reads next. 200 even when a part was "
        "rejected: see `rejected` and each part's `status`.",
        request=ReplyIn,
        examples=[
            OpenApiExample(
                "the first worked example (docs/design.md)",
                value={
                    "text": "Tests passed; starting packaging.",
                    "tool_calls": [
                        {"id": "call_1", "name": "package", "arguments": {"target": "v1"}},
                        {
                            "id": "call_2",
                            "name": "context_tx",
                            "arguments": {
                                "tx": "(context-tx (base-version 12) (derive test-result "
                                "(from @e42) (tests passed)) (retire @e42))"
                            },
                        },
                    ],
                },
                request_only=True,
            )
        ],
        responses=responses({200: ReplyResultSerializer}, *WRITE_ERRORS),
    )
    def post(self, request: Request, slug: str) -> Response:
        data = body_data(ReplyIn, request.data)
        result = take_apart_reply(
            self.ctx.pk,
            {
                "text": data.get("text") or "",
                "tool_calls": data.get("tool_calls") or [],
                "delivers": data.get("delivers") or [],
            },
            author=self.author(),
            thread=data.get("thread"),
            evaluation_id=data.get("evaluation"),
            idempotency_key=idempotency_key(request, data.get("idempotency_key")),
            tools=data.get("tools"),
            on_rejection=data.get("on_rejection") or "withhold",
        )
        return Response(result)
