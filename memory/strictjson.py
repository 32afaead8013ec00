"""JSON text read strictly, one rule for every place Morphz reads JSON a client wrote
(request bodies, MCP messages, a model's tool-call arguments).

`json.loads` keeps the last of a key given twice and accepts NaN and Infinity; both hide a
client's mistake (which value did it mean?) and PostgreSQL's jsonb cannot store the second.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKey(ValueError):
    """A JSON object gave `key` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r} in a JSON object")
        self.key = key


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKey(key)
        obj[key] = value
    return obj


def loads_strict(text: str | bytes) -> Any:
    """`json.loads` refusing NaN/Infinity (ValueError) and a key given twice (DuplicateKey,
    a ValueError naming the key); json.JSONDecodeError for malformed text."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_object)
