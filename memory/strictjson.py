"""JSON text read strictly, one rule for every place Morphz reads JSON a client wrote
(request bodies, MCP messages, a model's tool-call arguments).

`json.loads` keeps the last of a key given twice and accepts NaN and Infinity; both hide a
client's mistake (which value did it mean?) and PostgreSQL's jsonb cannot store the second.
JSON nested deeper than Python's recursion limit raises TooDeep, with the same wording as the
API's depth check (MAX_DEPTH) of JSON that decoded: never Python's own RecursionError text.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
TOO_DEEP = f"JSON nests deeper than {MAX_DEPTH} levels"


class TooDeep(ValueError):
    """The JSON text nests too deep to decode (past the interpreter's recursion limit)."""

    def __init__(self) -> None:
        super().__init__(TOO_DEEP)


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
    """`json.loads` refusing NaN/Infinity (ValueError), a key given twice (DuplicateKey, a
    ValueError naming the key) and nesting too deep to decode (TooDeep, a ValueError);
    json.JSONDecodeError for malformed text."""
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_object)
    except RecursionError:
        raise TooDeep() from None


class _Seen(dict[str, Any]):
    """An object read by `duplicate_place`: its first value of each key, and the first key
    given twice."""

    duplicate: str | None = None


def _keep_first(pairs: list[tuple[str, Any]]) -> _Seen:
    obj = _Seen()
    for key, value in pairs:
        if key not in obj:
            obj[key] = value
        elif obj.duplicate is None:
            obj.duplicate = key
    return obj


def _first_duplicate(value: Any, path: str) -> str | None:
    # Children before their parent, in order: the order objects close in the text, so the
    # first found is the one `loads_strict` refused.
    children: list[tuple[Any, str]] = []
    if isinstance(value, dict):
        children = [(child, f"{path}.{key}" if path else key) for key, child in value.items()]
    elif isinstance(value, list):
        children = [(child, f"{path}[{i}]") for i, child in enumerate(value)]
    for child, child_path in children:
        found = _first_duplicate(child, child_path)
        if found is not None:
            return found
    if isinstance(value, _Seen) and value.duplicate is not None:
        return f"{path}.{value.duplicate}" if path else value.duplicate
    return None


def duplicate_place(text: str | bytes, key: str) -> str:
    """Where in `text` (which `loads_strict` refused with DuplicateKey(key)) the key given
    twice is, as API fields are named (`payload.a`, `events[1].content`); `key` alone when
    the text cannot be walked (too deep)."""
    try:
        tree = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_keep_first)
        return _first_duplicate(tree, "") or key
    except (RecursionError, ValueError):
        return key


def read_json(text: str | bytes, what: str = "the body") -> Any:
    """`loads_strict(text)` with its failures as the errors a client gets (one wording for
    the API's request bodies and the explorer's body edits): InvalidRequest naming a key
    given twice (details `[{field, reason: "duplicate_key"}]`, `field` its place, like
    `payload.a`) or nesting too deep to decode
    (TOO_DEEP, as the API's depth check says it), ParseError for malformed JSON (details
    `[{line, column, expected}]`) or NaN/Infinity."""
    from memory.errors import InvalidRequest, ParseError

    try:
        return loads_strict(text)
    except DuplicateKey as exc:
        raise InvalidRequest(
            f"{what} gives the key {exc.key!r} twice; give each key once",
            details=[{"field": duplicate_place(text, exc.key), "reason": "duplicate_key"}],
        ) from None
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"{what} is not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}",
            details=[{"line": exc.lineno, "column": exc.colno, "expected": exc.msg}],
        ) from None
    except TooDeep as exc:
        raise InvalidRequest(str(exc), details=[{"max_depth": MAX_DEPTH}]) from None
    except ValueError as exc:
        raise ParseError(f"{what} is not valid JSON: {exc}"[:300]) from None
