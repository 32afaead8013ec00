"""replies/: take a model reply apart into transactions, reads, actions and a message (R46)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView, idempotency_key
from api.requests import body
from api.schema import WRITE_ERRORS, responses
from api.shape_schema import shape_serializer
from memory.agents.replies import take_apart_reply
from memory.idempotency import REPLY_KEY_MAX
from memory.requests.agents import ReplyIn
from memory.shapes.replies import ReplyResult


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
        responses=responses({200: shape_serializer(ReplyResult)}, *WRITE_ERRORS),
    )
    def post(self, request: Request, slug: str) -> Response:
        reply = body(ReplyIn, request.data)
        result = take_apart_reply(
            self.ctx.pk,
            {
                "text": reply.text,
                "tool_calls": [call.model_dump(exclude_unset=True) for call in reply.tool_calls],
                "delivers": reply.delivers,
            },
            author=self.author(),
            thread=reply.thread,
            evaluation_id=reply.evaluation,
            idempotency_key=idempotency_key(request, reply.idempotency_key, REPLY_KEY_MAX),
            tools=reply.tools,
            on_rejection=reply.on_rejection,
        )
        return Response(result)
