"""The language's constants, errors and the checks of names and strings, with messages a
model can act on."""

from __future__ import annotations

import json
import re
from typing import Any, Final, TypeAlias, TypedDict

from memory.vocabulary import (
    FRAME_ID_MAX,
    RELATION_NAME_MAX,
    THREAD_MAX,
    is_frame_id,
    is_ref,
    is_relation_name,
    is_thread_name,
)

MAX_BASE_VERSION: Final = 2**63 - 1
MAX_BODY_DEPTH: Final = 32

# Operation name -> its keys in the JSON form, in canonical order.
OPERATIONS: Final[dict[str, tuple[str, ...]]] = {
    "derive": ("id", "from", "body"),
    "revise": ("id", "from", "body"),
    "relate": ("subject", "name", "object"),
    "unrelate": ("subject", "name", "object"),
    "retire": ("refs",),
    "restore": ("ids",),
    "protect": ("ids",),
    "unprotect": ("ids",),
}
HEADERS: Final = ("base-version", "reason", "thread")
TX_KEYS: Final = ("base_version", "reason", "thread", "ops")

BodyValue: TypeAlias = "str | list[BodyValue] | dict[str, BodyValue]"
Transaction: TypeAlias = dict[str, Any]


class TxError(ValueError):
    """Base of the language's errors, so a caller can catch both forms' errors at once."""


class ParseErrorJson(TypedDict):
    message: str
    line: int
    column: int
    expected: str | None


class ValidationErrorJson(TypedDict):
    message: str
    path: str


class TxParseError(TxError):
    """The text form is malformed; `line` and `column` (1-based, in characters) say where."""

    def __init__(self, message: str, line: int, column: int, expected: str | None = None) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected

    def as_dict(self) -> ParseErrorJson:
        """The error as JSON: `{message, line, column, expected}` (1-based, in characters)."""
        return {
            "message": str(self),
            "line": self.line,
            "column": self.column,
            "expected": self.expected,
        }


class TxValidationError(TxError):
    """The JSON form is malformed; `path` names the place, like ``ops[2].body.goal``."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path

    def as_dict(self) -> ValidationErrorJson:
        """The error as JSON: `{message, path}`."""
        return {"message": str(self), "path": self.path}


# --------------------------------------------------------------------------- ids and refs


_ID_CHARS = 'lower-case letters, digits, "-", "_" and "."'
_ID_CHAR_SET: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")


def _name_problem(value: str, what: str, max_length: int) -> str:
    """Why `value` is not a valid frame id / relation name, phrased for the model to act on."""
    if not value:
        return f"a {what} cannot be empty"
    if len(value) > max_length:
        return f"a {what} has at most {max_length} characters"
    lowered = value.lower()
    if lowered != value and re.fullmatch(r"[a-z0-9][a-z0-9._-]*", lowered):
        return f'a {what} is lower-case: write "{lowered}"'
    if value[0] in "-_.":
        return f"a {what} starts with a lower-case letter or digit"
    bad = next(c for c in value if c not in _ID_CHAR_SET)
    return f"a {what} uses only {_ID_CHARS}, not {quote_char(bad)}"


def frame_id_problem(value: str) -> str | None:
    """Why `value` is not a frame id, or None when it is."""
    at_sign = "event refs name events, not frames; a frame id is needed here"
    return None if is_frame_id(value) else _frame_id_or_ref_problem(value, at_sign)


def relation_name_problem(value: str) -> str | None:
    """Why `value` is not a relation name, or None when it is."""
    if is_relation_name(value):
        return None
    return _name_problem(value, "relation name", RELATION_NAME_MAX)


def ref_problem(value: str) -> str | None:
    """Why `value` is not an event ref or frame id, or None when it is."""
    at_sign = "an event ref is @e and the event number without leading zeros, e.g. @e42"
    return None if is_ref(value) else _frame_id_or_ref_problem(value, at_sign)


def _frame_id_or_ref_problem(value: str, at_sign: str) -> str:
    """Why `value`, refused where a frame id (or a ref) stands: `at_sign` when it starts
    with @, else what breaks the frame id rule."""
    if value.startswith("@"):
        return at_sign
    return _name_problem(value, "frame id", FRAME_ID_MAX)


def quote_char(char: str) -> str:
    """`char` as a message shows it: JSON-quoted when printable, else its code point."""
    return json.dumps(char, ensure_ascii=False) if char.isprintable() else f"U+{ord(char):04X}"


# Characters no stored string may hold: PostgreSQL rejects NUL, and lone surrogates are not
# valid Unicode (they cannot even be encoded to UTF-8).
FORBIDDEN_RE: Final = re.compile("[\x00\ud800-\udfff]")


def forbidden_char_problem(char: str) -> str:
    """Why `char` may not appear in the language's text."""
    if char == "\x00":
        return "a NUL character (U+0000) is not allowed"
    return f"a lone surrogate (U+{ord(char):04X}) is not allowed; text must be valid Unicode"


def string_problem(value: str) -> str | None:
    """Why a string value is refused (a forbidden character), or None."""
    bad = FORBIDDEN_RE.search(value)
    return None if bad is None else forbidden_char_problem(bad.group())


def thread_problem(value: str) -> str | None:
    """Why `value` is not a thread name, or None when it is."""
    if not value:
        return "a thread name cannot be empty"
    if len(value) > THREAD_MAX:
        return f"a thread name has at most {THREAD_MAX} characters"
    if not is_thread_name(value):
        return (
            'a thread name uses letters, digits, ".", "_", ":" and "-", and starts '
            "with a letter or digit"
        )
    return None
