"""The reference `server-memory` (npm, pinned in package.json) beside Morphz's MCP server.

`reference_server(path)` starts the real reference over stdio with its memory in `path`;
`outcome(result)` normalises one tool answer of either server to what must match:
whether it is an error, and the JSON value (entities and relations in a canonical order,
since the reference answers in insertion order and Morphz in frame-id order; identical
relations once, since the reference may store one twice). Each normalisation is a
difference named in docs/agents.md ("Differences from the reference server").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import REPO

REFERENCE_JS = (
    REPO / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
)


def reference_params(memory_file: Path) -> Any:
    """How to launch the reference: node, its dist/index.js, MEMORY_FILE_PATH."""
    from mcp import StdioServerParameters

    node = shutil.which("node")
    if node is None or not REFERENCE_JS.exists():
        pytest.fail("the reference server needs node and `npm ci` (./dev install)")
    return StdioServerParameters(
        command=node, args=[str(REFERENCE_JS)], env={"MEMORY_FILE_PATH": str(memory_file)}
    )


def reference_client(memory_file: Path) -> Any:
    from mcp import Client

    return Client(reference_params(memory_file))


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _relation_key(r: dict[str, str]) -> tuple[str, str, str]:
    return (r["from"], r["to"], r["relationType"])


def canonical(value: Any) -> Any:
    """A graph (or list of relations / entities) in canonical order, relations once."""
    if isinstance(value, dict) and set(value) == {"entities", "relations"}:
        return {
            "entities": sorted(value["entities"], key=lambda e: e["name"]),
            "relations": sorted(
                {_relation_key(r): r for r in value["relations"]}.values(), key=_relation_key
            ),
        }
    return value


def outcome(result: Any) -> tuple[bool, Any]:
    """(is_error, normalised value): errors compare by being errors (their texts differ:
    the SDKs word validation errors differently)."""
    if result.is_error:
        return True, None
    text = text_of(result)
    try:
        value = json.loads(text)
    except ValueError:
        return False, text
    return False, canonical(value)


async def call(client: Any, name: str, args: dict[str, Any]) -> Any:
    return await client.call_tool(name, args)
