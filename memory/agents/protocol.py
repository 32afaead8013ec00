"""The model protocol of one context (R45): `morphz_protocol` is the one source of truth
(the package the server and the client share; it works offline); the server fills in the
context's settings."""

from __future__ import annotations

from typing import cast

import morphz_protocol as model_protocol

from memory.models import Context
from memory.shapes.protocol import ProtocolJson, ProtocolSettings

# The memory tools a model is given, in the protocol's order.
MEMORY_TOOLS: tuple[str, ...] = tuple(tool["name"] for tool in model_protocol.TOOLS)


def protocol_settings(context: Context) -> ProtocolSettings:
    """The settings the model protocol's instructions quote for this context: its slug,
    grace ticks, capacity and observation budget in tokens, and the three percents."""
    return {
        "slug": context.slug,
        "grace_ticks": context.grace_ticks,
        "capacity_tokens": context.capacity_tokens,
        "observation_budget_tokens": context.observation_budget_tokens,
        "pressure_percent": context.pressure_percent,
        "maintenance_percent": context.maintenance_percent,
        "maintenance_exit_percent": context.maintenance_exit_percent,
    }


def context_protocol(context: Context) -> ProtocolJson:
    """`{version, instructions, tools: {openai, anthropic}, settings}` for this context
    (every setting given, so none takes the package's default)."""
    return cast(ProtocolJson, model_protocol.protocol(protocol_settings(context)))


def context_instructions(context: Context) -> str:
    """The model protocol's instructions with this context's settings (R45)."""
    return model_protocol.instructions(protocol_settings(context))
