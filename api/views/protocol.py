"""protocol/: the model protocol, instructions and memory tools for this context (R45)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.schema import READ_ERRORS, responses
from memory.agents.protocol import context_protocol


class ProtocolSerializer(serializers.Serializer):
    version = serializers.CharField()
    instructions = serializers.CharField(help_text="teaches a model the memory protocol")
    tools = serializers.JSONField(help_text="`openai` and `anthropic` tool definitions")
    settings = serializers.JSONField(help_text="the context settings filled in")


class ProtocolView(ContextAPIView):
    @extend_schema(
        tags=["agents"],
        operation_id="protocol_read",
        summary="The model protocol: instructions and memory tools for this context",
        description="`instructions` (this context's settings filled in) and the memory "
        "tools (`context_tx`, `recall`, `search`, `read_event`, `frame`, `cancel_action`) in the OpenAI and "
        "the Anthropic function-calling shapes. The same is in the Python client, offline "
        "(`morphz_protocol`).",
        responses=responses({200: ProtocolSerializer}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(context_protocol(self.ctx))
