"""protocol/: the model protocol, instructions and memory tools for this context (R45)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import ContextAPIView
from api.schema import READ_ERRORS, responses
from api.shape_schema import shape_serializer
from memory.agents.protocol import MEMORY_TOOLS, context_protocol
from memory.shapes.protocol import ProtocolJson


class ProtocolView(ContextAPIView):
    @extend_schema(
        tags=["agents"],
        operation_id="protocol_read",
        summary="The model protocol: instructions and memory tools for this context",
        description="`instructions` (this context's settings filled in) and the memory "
        f"tools ({', '.join(f'`{name}`' for name in MEMORY_TOOLS)}) in the OpenAI and "
        "the Anthropic function-calling shapes. The same is in the Python client, offline "
        "(`morphz_protocol`).",
        responses=responses({200: shape_serializer(ProtocolJson)}, *READ_ERRORS),
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(context_protocol(self.ctx))
