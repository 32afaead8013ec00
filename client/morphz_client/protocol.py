"""The model protocol, offline (R45): re-exported from `morphz_protocol`, the package the
server and the client share, so `morphz_client.protocol` keeps working for client users."""

from morphz_protocol import (
    DEFAULT_SETTINGS,
    MEMORY_TOOL_NAMES,
    PROTOCOL_VERSION,
    TOOLS,
    anthropic_tools,
    instructions,
    openai_tools,
    protocol,
)

__all__ = [
    "DEFAULT_SETTINGS",
    "MEMORY_TOOL_NAMES",
    "PROTOCOL_VERSION",
    "TOOLS",
    "anthropic_tools",
    "instructions",
    "openai_tools",
    "protocol",
]
