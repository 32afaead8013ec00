"""The canonical printer: the JSON form to the text form, exactly reversible."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from memory.tx.lang.jsonform import validate_json
from memory.tx.lang.names import BodyValue, Transaction

# Printed bare: plain ASCII words. Any atom would read back the same, but the worked examples
# (docs/design.md) quote prose, Chinese text and paths ("dist/"): following them keeps them canonical.
_BARE_RE: Final = re.compile(r"[A-Za-z0-9._@:+-]+\Z")
# Control characters and the Unicode line separators would break the one-line layout.
_ESCAPE_RE: Final = re.compile('[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029]')
_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def format_string(value: str) -> str:
    """Bare when it is a plain word, else quoted, escaping only what must be escaped."""
    if _BARE_RE.match(value):
        return value
    return _quote(value)


def _quote(value: str) -> str:
    return '"' + _ESCAPE_RE.sub(_escape, value) + '"'


def _format_value(value: BodyValue) -> str:
    """A value in a position that holds values: element of a list, or a field's value."""
    if isinstance(value, str):
        return format_string(value)
    if isinstance(value, list):
        return "[" + " ".join(_format_value(item) for item in value) + "]"
    return "{" + " ".join(_format_field(key, item) for key, item in value.items()) + "}"


def _format_field(key: str, value: BodyValue) -> str:
    if isinstance(value, list) and len(value) >= 2:
        inner = " ".join(_format_value(item) for item in value)
    elif isinstance(value, dict) and value:
        inner = " ".join(_format_field(k, v) for k, v in value.items())
    else:
        # Strings, and the lists and maps the plain forms cannot write: [], [x], {}.
        inner = _format_value(value)
    return f"({format_string(key)} {inner})"


def _format_op(op: Mapping[str, Any]) -> str:
    name = op["op"]
    parts: list[str] = [name]
    if name in ("derive", "revise"):
        parts.append(op["id"])
        if op["from"]:
            parts.append("(from " + " ".join(op["from"]) + ")")
        parts.extend(_format_field(key, value) for key, value in op["body"].items())
    elif name in ("relate", "unrelate"):
        parts.extend((op["subject"], op["name"], op["object"]))
    else:
        parts.extend(op["refs"] if name == "retire" else op["ids"])
    return "(" + " ".join(parts) + ")"


def fields_text(body: Mapping[str, BodyValue]) -> str:
    """A frame body as canonical S-expression fields, one per line, as `revise` takes them."""
    return "\n".join(_format_field(key, value) for key, value in body.items())


def to_text(tx: Mapping[str, Any]) -> str:
    """The canonical text of a JSON-form transaction (validated first: `TxValidationError`)."""
    return canonical_text(validate_json(tx))


def canonical_text(checked: Transaction) -> str:
    """The canonical text of a transaction `validate_json` or `parse_text` returned (the
    commit path prints what it has just checked, without checking it again)."""
    lines = ["(context-tx"]
    if checked["base_version"] is not None:
        lines.append(f"  (base-version {checked['base_version']})")
    if checked["reason"] is not None:
        # The reason is prose, so it is always quoted, as in docs/design.md.
        lines.append(f"  (reason {_quote(checked['reason'])})")
    if checked["thread"] is not None:
        lines.append(f"  (thread {format_string(checked['thread'])})")
    lines.extend(f"  {_format_op(op)}" for op in checked["ops"])
    return "\n".join(lines) + ")"
