"""The context-transaction language (spec R9, R10 and the JSON shapes of section 7).

A context transaction has two equal forms. The model writes the text form, an S-expression::

    (context-tx
      (base-version 12)
      (reason "测试结果已吸收，继续准备发布")
      (derive test-result (from @e42) (tests passed))
      (retire @e42))

REST clients send, and the engine works on, the JSON form::

    {"base_version": 12, "reason": "测试结果已吸收，继续准备发布", "thread": None,
     "ops": [{"op": "derive", "id": "test-result", "from": ["@e42"], "body": {"tests": "passed"}},
             {"op": "retire", "refs": ["@e42"]}]}

`parse_text` reads text into the JSON form, `validate_json` checks and normalises the JSON form,
and `to_text` prints the canonical text. Round trips are exact: ``parse_text(to_text(tx)) == tx``
for every validated ``tx`` (body order included) and ``to_text(parse_text(t)) == t`` for every
canonical text ``t``.

Grammar (``;`` starts a comment that runs to the end of the line)::

    transaction := "(" "context-tx" header* operation+ ")"
    header      := "(base-version" DIGITS ")" | "(reason" scalar ")" | "(thread" scalar ")"
    operation   := "(" ("derive" | "revise") FRAME-ID sources? field* ")"
                 | "(" ("relate" | "unrelate") FRAME-ID NAME FRAME-ID ")"
                 | "(" ("retire" | "restore") REF+ ")"
                 | "(" ("protect" | "unprotect") FRAME-ID+ ")"
    sources     := "(from" REF+ ")"
    field       := "(" key value+ ")"      ; one value is itself, several make a list
                 | "(" key field+ ")"      ; a nested map
    value       := scalar | "[" value* "]" | "{" field* "}"
    key, scalar := ATOM | STRING

Decisions beyond the spec's wording:

* Each header appears at most once, in any order, before the first operation.
* Bodies hold only strings, lists and maps; a bare word is always a string (``42`` is "42").
* A derive or revise may have no fields: its body is ``{}`` (for revise that would replace the
  body with an empty map; whether that is allowed is the engine's rule, not the language's).
* At the top of a body the key ``from`` (bare or quoted) is the sources clause and must come
  first; inside nested maps it is an ordinary key. The JSON form refuses a top-level body key
  ``"from"`` so that both forms describe the same set of transactions.
* Ids, names and refs may also be written as quoted strings; the printer writes them bare.
* Strings never contain NUL or lone surrogates (PostgreSQL cannot store them); a ``\\uXXXX``
  surrogate pair is combined into one character, as in JSON. Field names are non-empty.
* Repeated refs (``(retire @e1 @e1)``) are kept as written; deduplication is the engine's job.
* A body nests at most `MAX_BODY_DEPTH` levels of maps and lists (the body itself is level 1);
  this also bounds the parser's recursion on hostile input.
* Canonical text: ``(context-tx``, then base-version, reason (always quoted), thread and each
  operation on its own line indented two spaces, the final ``)`` closing the last line. Plain
  ASCII words (``[A-Za-z0-9._@:+-]+``) print bare, any other string quoted, escaping only ``"``,
  ``\\``, control characters and U+2028/U+2029. Lists of two or more values use the plain
  ``(k a b)`` form, non-empty maps the ``(k (a x))`` form, and ``[..]``/``{..}`` serve the rest.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, NamedTuple, TypeAlias

__all__ = [
    "EVENT_REF_RE",
    "FRAME_ID_RE",
    "MAX_BASE_VERSION",
    "MAX_BODY_DEPTH",
    "OPERATIONS",
    "RELATION_NAME_RE",
    "THREAD_MAX_LENGTH",
    "BodyValue",
    "TxError",
    "TxParseError",
    "TxValidationError",
    "canonicalize",
    "event_ref",
    "event_seq",
    "is_event_ref",
    "is_frame_id",
    "is_ref",
    "is_relation_name",
    "parse_text",
    "to_text",
    "validate_json",
]

# `\Z` rather than `$`: `$` would also accept a trailing newline.
FRAME_ID_RE: Final = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}\Z")
RELATION_NAME_RE: Final = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}\Z")
# At most 18 digits: the sequence number always fits a signed 64-bit column.
EVENT_REF_RE: Final = re.compile(r"^@e([1-9][0-9]{0,17})\Z")

MAX_BASE_VERSION: Final = 2**63 - 1
MAX_BODY_DEPTH: Final = 32
THREAD_MAX_LENGTH: Final = 128

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
_HEADERS: Final = ("base-version", "reason", "thread")
_TX_KEYS: Final = ("base_version", "reason", "thread", "ops")

BodyValue: TypeAlias = "str | list[BodyValue] | dict[str, BodyValue]"
Transaction: TypeAlias = dict[str, Any]


class TxError(ValueError):
    """Base of the language's errors, so a caller can catch both forms' errors at once."""


class TxParseError(TxError):
    """The text form is malformed; `line` and `column` (1-based, in characters) say where."""

    def __init__(self, message: str, line: int, column: int, expected: str | None = None) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected

    def as_dict(self) -> dict[str, object]:
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

    def as_dict(self) -> dict[str, object]:
        return {"message": str(self), "path": self.path}


# --------------------------------------------------------------------------- ids and refs


def is_frame_id(value: object) -> bool:
    return isinstance(value, str) and FRAME_ID_RE.match(value) is not None


def is_relation_name(value: object) -> bool:
    return isinstance(value, str) and RELATION_NAME_RE.match(value) is not None


def is_event_ref(value: object) -> bool:
    return isinstance(value, str) and EVENT_REF_RE.match(value) is not None


def is_ref(value: object) -> bool:
    """A stable reference: an event ref (``@e42``) or a frame id."""
    return is_event_ref(value) or is_frame_id(value)


def event_seq(ref: str) -> int:
    """The sequence number of an event ref: ``event_seq("@e42") == 42``."""
    match = EVENT_REF_RE.match(ref)
    if match is None:
        raise ValueError(f"not an event ref: {ref!r}")
    return int(match.group(1))


def event_ref(seq: int) -> str:
    """The model-facing ref of an event: ``event_ref(42) == "@e42"``."""
    return f"@e{seq}"


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
    return f"a {what} uses only {_ID_CHARS}, not {_quote_char(bad)}"


def _frame_id_problem(value: str) -> str | None:
    if FRAME_ID_RE.match(value):
        return None
    if value.startswith("@"):
        return "event refs name events, not frames; a frame id is needed here"
    return _name_problem(value, "frame id", 128)


def _relation_name_problem(value: str) -> str | None:
    if RELATION_NAME_RE.match(value):
        return None
    return _name_problem(value, "relation name", 64)


def _ref_problem(value: str) -> str | None:
    if EVENT_REF_RE.match(value) or FRAME_ID_RE.match(value):
        return None
    if value.startswith("@"):
        return "an event ref is @e and the event number without leading zeros, e.g. @e42"
    return _name_problem(value, "frame id", 128)


def _quote_char(char: str) -> str:
    return json.dumps(char, ensure_ascii=False) if char.isprintable() else f"U+{ord(char):04X}"


# Characters no stored string may hold: PostgreSQL rejects NUL, and lone surrogates are not
# valid Unicode (they cannot even be encoded to UTF-8).
_FORBIDDEN_RE: Final = re.compile("[\x00\ud800-\udfff]")


def _forbidden_char_problem(char: str) -> str:
    if char == "\x00":
        return "a NUL character (U+0000) is not allowed"
    return f"a lone surrogate (U+{ord(char):04X}) is not allowed; text must be valid Unicode"


def _string_problem(value: str) -> str | None:
    bad = _FORBIDDEN_RE.search(value)
    return None if bad is None else _forbidden_char_problem(bad.group())


def _thread_problem(value: str) -> str | None:
    if not value:
        return "a thread name cannot be empty"
    if len(value) > THREAD_MAX_LENGTH:
        return f"a thread name has at most {THREAD_MAX_LENGTH} characters"
    return _string_problem(value)


# --------------------------------------------------------------------------- tokenizer

_ATOM: Final = "atom"
_STRING: Final = "string"
_EOF: Final = "end"
_PUNCTUATION: Final = "()[]{}"
_CLOSER: Final = {"(": ")", "[": "]", "{": "}"}


class _Token(NamedTuple):
    kind: str  # _ATOM, _STRING, _EOF, or the punctuation character itself
    text: str  # the atom, or the string's decoded value
    line: int
    column: int


_ATOM_RE: Final = re.compile(r'[^\s()\[\]{}";]+')
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SPACE_RE: Final = re.compile(r"[^\S\n]+")
_STRING_RUN_RE: Final = re.compile(r'[^"\\\n]+')
_HEX4_RE: Final = re.compile(r"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES: Final = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


def _position(text: str, index: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def _tokenize(text: str) -> list[_Token]:
    bad = _FORBIDDEN_RE.search(text)
    if bad is not None:
        raise TxParseError(_forbidden_char_problem(bad.group()), *_position(text, bad.start()))
    tokens: list[_Token] = []
    length = len(text)
    # A byte-order mark at the very start is an editor artefact, not content.
    index = line_start = 1 if text.startswith("\ufeff") else 0
    line = 1
    while index < length:
        char = text[index]
        if char == "\n":
            index += 1
            line += 1
            line_start = index
            continue
        space = _SPACE_RE.match(text, index)
        if space is not None:
            index = space.end()
            continue
        column = index - line_start + 1
        if char == ";":
            newline = text.find("\n", index)
            index = length if newline < 0 else newline
        elif char in _PUNCTUATION:
            tokens.append(_Token(char, char, line, column))
            index += 1
        elif char == '"':
            value, index, end_line, line_start = _read_string(text, index, line, line_start)
            tokens.append(_Token(_STRING, value, line, column))
            line = end_line
        else:
            atom = _ATOM_RE.match(text, index)
            assert atom is not None  # `char` is neither space nor special, so it starts an atom
            control = _CONTROL_RE.search(atom.group())
            if control is not None:
                raise TxParseError(
                    f"control character {_quote_char(control.group())} is not allowed outside "
                    "a string",
                    line,
                    column + control.start(),
                )
            tokens.append(_Token(_ATOM, atom.group(), line, column))
            index = atom.end()
    tokens.append(_Token(_EOF, "", line, index - line_start + 1))
    return tokens


def _read_string(text: str, start: int, line: int, line_start: int) -> tuple[str, int, int, int]:
    """Decode the string opening at `start`; returns (value, next index, line, line start)."""
    open_line, open_column = line, start - line_start + 1
    parts: list[str] = []
    index = start + 1
    while True:
        run = _STRING_RUN_RE.match(text, index)
        if run is not None:
            parts.append(run.group())
            index = run.end()
        if index >= len(text):
            raise TxParseError(
                'unterminated string: no closing " for the string that starts here',
                open_line,
                open_column,
                '"',
            )
        char = text[index]
        if char == '"':
            return "".join(parts), index + 1, line, line_start
        if char == "\n":
            parts.append("\n")
            index += 1
            line += 1
            line_start = index
            continue
        # A backslash: decode one escape.
        column = index - line_start + 1
        escape = text[index + 1 : index + 2]
        if escape in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[escape])
            index += 2
        elif escape == "u":
            char, index = _read_unicode_escape(text, index, line, column)
            parts.append(char)
        elif not escape:
            raise TxParseError(
                'unterminated string: no closing " for the string that starts here',
                open_line,
                open_column,
                '"',
            )
        else:
            shown = (
                f"\\{escape}" if escape.isprintable() else f"\\ followed by {_quote_char(escape)}"
            )
            raise TxParseError(
                f'unknown escape "{shown}" in a string; the escapes are \\" \\\\ \\n \\t \\r '
                "and \\uXXXX (write \\\\ for a backslash)",
                line,
                column,
                "an escape",
            )


def _read_unicode_escape(text: str, index: int, line: int, column: int) -> tuple[str, int]:
    """Decode ``\\uXXXX`` at `index` (a surrogate pair spans two escapes, as in JSON)."""
    digits = _HEX4_RE.match(text, index + 2)
    if digits is None:
        raise TxParseError(
            "\\u must be followed by exactly four hex digits, e.g. \\u00e9", line, column, "XXXX"
        )
    code = int(digits.group(), 16)
    if code == 0:
        raise TxParseError(_forbidden_char_problem("\x00"), line, column)
    if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", index + 6):
        low = _HEX4_RE.match(text, index + 8)
        if low is not None and 0xDC00 <= int(low.group(), 16) <= 0xDFFF:
            combined = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
            return chr(combined), index + 12
    if 0xD800 <= code <= 0xDFFF:
        raise TxParseError(_forbidden_char_problem(chr(code)), line, column)
    return chr(code), index + 6


# --------------------------------------------------------------------------- parser


def _describe(token: _Token) -> str:
    if token.kind == _EOF:
        return "end of input"
    shown = token.text if len(token.text) <= 40 else token.text[:40] + "…"
    quoted = json.dumps(shown, ensure_ascii=False)
    return f"the string {quoted}" if token.kind == _STRING else quoted


def _height(value: BodyValue) -> int:
    """Levels of maps and lists in `value` (a string has none)."""
    if isinstance(value, str):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_height(child) for child in children), default=0)


class _Parser:
    def __init__(self, text: str) -> None:
        self._tokens = _tokenize(text)
        self._index = 0

    def _next(self) -> _Token:
        token = self._tokens[self._index]
        if token.kind != _EOF:
            self._index += 1
        return token

    def _peek(self) -> _Token:
        return self._tokens[self._index]

    @staticmethod
    def _error(token: _Token, message: str, expected: str | None = None) -> TxParseError:
        return TxParseError(message, token.line, token.column, expected)

    def _unexpected(self, token: _Token, expected: str, opener: _Token, label: str) -> TxParseError:
        """`token` is not what the form `label` (opened by `opener`) can hold at this point."""
        if token.kind == _EOF:
            close = _CLOSER[opener.kind]
            return self._error(
                token,
                f'unexpected end of input: expected {expected}; add "{close}" to close '
                f'"{label}" opened at line {opener.line}, column {opener.column}',
                expected,
            )
        return self._error(token, f"expected {expected}, found {_describe(token)}", expected)

    def _close(self, opener: _Token, label: str) -> None:
        token = self._next()
        if token.kind != ")":
            raise self._unexpected(token, f'")" to end "{label}"', opener, label)

    def _word(self, opener: _Token, label: str, expected: str) -> _Token:
        token = self._next()
        if token.kind not in (_ATOM, _STRING):
            raise self._unexpected(token, expected, opener, label)
        return token

    def _checked(self, token: _Token, expected: str, problem: str | None) -> str:
        if problem is not None:
            raise self._error(
                token, f"expected {expected}, found {_describe(token)}: {problem}", expected
            )
        return token.text

    # ----------------------------------------------------------------- transaction

    def parse(self) -> Transaction:
        opener = self._next()
        if opener.kind != "(":
            raise self._error(
                opener,
                f'expected "(context-tx" to start the transaction, found {_describe(opener)}',
                '"(context-tx"',
            )
        head = self._next()
        if head.kind != _ATOM or head.text != "context-tx":
            raise self._unexpected(head, '"context-tx"', opener, "(")
        label = "(context-tx"
        tx: Transaction = {"base_version": None, "reason": None, "thread": None, "ops": []}
        seen_headers: dict[str, _Token] = {}
        while True:
            clause = self._next()
            if clause.kind == ")":
                break
            if clause.kind != "(":
                raise self._unexpected(clause, 'an operation like "(derive" or ")"', opener, label)
            name = self._next()
            if name.kind != _ATOM:
                raise self._unexpected(name, "an operation name", clause, "(")
            if name.text in _HEADERS:
                if tx["ops"]:
                    raise self._error(
                        name, f'the header "({name.text}" must come before the operations'
                    )
                if name.text in seen_headers:
                    first = seen_headers[name.text]
                    raise self._error(
                        name,
                        f'duplicate header "({name.text}"; it was already given at line '
                        f"{first.line}, column {first.column}",
                    )
                seen_headers[name.text] = name
                self._header(name.text, clause, tx)
            elif name.text in OPERATIONS:
                tx["ops"].append(self._operation(name.text, clause))
            else:
                raise self._error(name, _unknown_clause_message(name.text), "an operation")
        if not tx["ops"]:
            raise self._error(
                clause,
                "a transaction needs at least one operation: " + ", ".join(OPERATIONS),
                "an operation",
            )
        trailing = self._next()
        if trailing.kind != _EOF:
            raise self._error(
                trailing,
                f"unexpected text after the end of the transaction: found {_describe(trailing)}; "
                f'the ")" at line {clause.line}, column {clause.column} already closed '
                '"(context-tx"',
                "end of input",
            )
        return tx

    def _header(self, name: str, opener: _Token, tx: Transaction) -> None:
        label = f"({name}"
        if name == "base-version":
            token = self._word(opener, label, "a non-negative integer")
            if token.kind != _ATOM or not re.fullmatch(r"[0-9]+", token.text):
                raise self._error(
                    token,
                    f"expected a non-negative integer (the version you read), found "
                    f"{_describe(token)}",
                    "a non-negative integer",
                )
            # Compare lengths first: int() refuses very long digit strings with ValueError.
            digits = token.text.lstrip("0") or "0"
            if len(digits) > 19 or int(digits) > MAX_BASE_VERSION:
                raise self._error(token, "base-version is too large", "a non-negative integer")
            tx["base_version"] = int(digits)
        elif name == "reason":
            token = self._word(opener, label, 'the reason as a "quoted string"')
            tx["reason"] = token.text
        else:
            token = self._word(opener, label, "a thread name")
            tx["thread"] = self._checked(token, "a thread name", _thread_problem(token.text))
        token = self._peek()
        if token.kind in (_ATOM, _STRING):
            raise self._error(
                token,
                f'"{label}" takes a single value; put text with spaces in double quotes',
                '")"',
            )
        self._close(opener, label)

    # ----------------------------------------------------------------- operations

    def _operation(self, name: str, opener: _Token) -> dict[str, Any]:
        label = f"({name}"
        if name in ("derive", "revise"):
            token = self._word(opener, label, "a frame id")
            frame_id = self._checked(token, "a frame id", _frame_id_problem(token.text))
            sources: list[str] = []
            body = self._entries(")", opener, label, 1, sources)
            return {"op": name, "id": frame_id, "from": sources, "body": body}
        if name in ("relate", "unrelate"):
            token = self._word(opener, label, "the subject frame id")
            subject = self._checked(token, "a frame id", _frame_id_problem(token.text))
            token = self._word(opener, label, "a relation name")
            relation = self._checked(token, "a relation name", _relation_name_problem(token.text))
            token = self._word(opener, label, "the object frame id")
            target = self._checked(token, "a frame id", _frame_id_problem(token.text))
            token = self._peek()
            if token.kind in (_ATOM, _STRING):
                raise self._error(
                    token,
                    f'"{label}" takes exactly three words: subject, relation name, object; '
                    f"found an extra {_describe(token)}",
                    '")"',
                )
            self._close(opener, label)
            return {"op": name, "subject": subject, "name": relation, "object": target}
        frames_only = name in ("protect", "unprotect")
        refs = self._refs(opener, label, frames_only)
        return {"op": name, "refs" if name == "retire" else "ids": refs}

    def _refs(self, opener: _Token, label: str, frames_only: bool) -> list[str]:
        """One or more refs up to and including the closing ")"."""
        expected = "a frame id" if frames_only else "a ref (@eN or a frame id)"
        refs: list[str] = []
        while True:
            token = self._next()
            if token.kind == ")" and refs:
                return refs
            if token.kind == ")":
                raise self._error(token, f'"{label}" needs at least one ref: {expected}', expected)
            if token.kind not in (_ATOM, _STRING):
                raise self._unexpected(token, f'{expected} or ")"', opener, label)
            check = _frame_id_problem if frames_only else _ref_problem
            refs.append(self._checked(token, expected, check(token.text)))

    # ----------------------------------------------------------------- bodies

    def _entries(
        self,
        closer: str,
        opener: _Token,
        label: str,
        depth: int,
        sources: list[str] | None = None,
    ) -> dict[str, BodyValue]:
        """The fields of a map at nesting `depth`, up to and including `closer`.

        `sources` is given only for the top of a derive/revise body, where a leading
        ``(from ...)`` is the sources clause; it receives the refs.
        """
        result: dict[str, BodyValue] = {}
        keys: dict[str, _Token] = {}
        seen_from = False
        while True:
            token = self._next()
            if token.kind == closer:
                return result
            if token.kind != "(":
                raise self._unexpected(
                    token, f'a field like (key value) or "{closer}"', opener, label
                )
            key_token = self._word(token, "(", "a field name")
            key = key_token.text
            if sources is not None and key == "from":
                if seen_from or result:
                    where = "only once" if seen_from else "before the fields"
                    raise self._error(
                        key_token,
                        f'"(from ...)" must come {where}, right after the frame id in "{label}"',
                    )
                seen_from = True
                sources.extend(self._refs(token, "(from", frames_only=False))
                continue
            if not key:
                raise self._error(key_token, "a field name cannot be empty", "a field name")
            if key in keys:
                first = keys[key]
                raise self._error(
                    key_token,
                    f"duplicate field {json.dumps(key, ensure_ascii=False)} in this map; it was "
                    f"already given at line {first.line}, column {first.column}",
                )
            keys[key] = key_token
            result[key] = self._field_value(token, key, depth)

    def _field_value(self, opener: _Token, key: str, depth: int) -> BodyValue:
        """The value of the field opened by `opener` in a map at `depth`, through its ")"."""
        label = f"({_format_string(key)}"
        first = self._peek()
        if first.kind == ")":
            raise self._error(
                first,
                f'the field {json.dumps(key, ensure_ascii=False)} has no value; write "" for an '
                "empty string, [] for an empty list or {} for an empty map",
                "a value",
            )
        if first.kind == "(":
            # All items are fields: the value is a nested map.
            if depth + 1 > MAX_BODY_DEPTH:
                raise self._too_deep(first)
            return self._entries(")", opener, label, depth + 1)
        values = [self._value(self._next(), depth + 1, opener, label)]
        if self._peek().kind == ")":
            self._next()
            return values[0]
        # Several values make a list; it sits at depth + 1 and its elements one level deeper.
        if depth + 1 + _height(values[0]) > MAX_BODY_DEPTH:
            raise self._too_deep(first)
        while True:
            token = self._next()
            if token.kind == ")":
                return values
            if token.kind == "(":
                raise self._error(
                    token,
                    f'"{label}" holds values, so it cannot also hold (key value) fields; '
                    "write a map among values as {(key value) ...}",
                    "a value",
                )
            values.append(self._value(token, depth + 2, opener, label))

    def _value(self, token: _Token, depth: int, opener: _Token, label: str) -> BodyValue:
        """One value starting at `token`; a list or map made here sits at `depth`."""
        if token.kind in (_ATOM, _STRING):
            return token.text
        if token.kind == "[":
            if depth > MAX_BODY_DEPTH:
                raise self._too_deep(token)
            items: list[BodyValue] = []
            while True:
                item = self._next()
                if item.kind == "]":
                    return items
                if item.kind == "(":
                    raise self._error(
                        item,
                        "a list holds values, not (key value) fields; write a map inside a "
                        "list as {(key value) ...}",
                        "a value",
                    )
                if item.kind in ")}":
                    raise self._unexpected(item, 'a value or "]"', token, "[")
                items.append(self._value(item, depth + 1, token, "["))
        if token.kind == "{":
            if depth > MAX_BODY_DEPTH:
                raise self._too_deep(token)
            return self._entries("}", token, "{", depth)
        raise self._unexpected(
            token, 'a value (a word, a "string", [a list] or {a map})', opener, label
        )

    def _too_deep(self, token: _Token) -> TxParseError:
        return self._error(
            token, f"the body nests too deeply: at most {MAX_BODY_DEPTH} levels of maps and lists"
        )


def _unknown_clause_message(name: str) -> str:
    message = (
        f"unknown operation {json.dumps(name, ensure_ascii=False)}; the operations are "
        f"{', '.join(OPERATIONS)} and the headers are {', '.join(_HEADERS)}"
    )
    close = difflib.get_close_matches(name.lower(), [*OPERATIONS, *_HEADERS], n=1, cutoff=0.6)
    return f'{message}; did you mean "{close[0]}"?' if close else message


def parse_text(text: str) -> Transaction:
    """Parse the text form into the JSON form, or raise `TxParseError` saying where and why."""
    if not isinstance(text, str):
        raise TypeError(f"parse_text() needs a str, not {type(text).__name__}")
    return _Parser(text).parse()


# --------------------------------------------------------------------------- JSON form

_PLAIN_KEY_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def _join(path: str, key: object) -> str:
    """Extend a JSON path: ``ops[2].body.goal``, or ``body["two words"]`` for odd keys."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    if isinstance(key, str) and _PLAIN_KEY_RE.match(key):
        return f"{path}.{key}" if path else key
    shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)
    return f"{path}[{shown}]"


def _expect_string(value: object, path: str, what: str) -> str:
    if not isinstance(value, str):
        raise TxValidationError(f"must be {what}, not {_json_type(value)}", path)
    problem = _string_problem(value)
    if problem is not None:
        raise TxValidationError(problem, path)
    return value


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


_Problem: TypeAlias = Callable[[str], str | None]


def _checked_name(value: object, path: str, what: str, problem: _Problem) -> str:
    text = _expect_string(value, path, what)
    reason = problem(text)
    if reason is not None:
        raise TxValidationError(
            f"{json.dumps(text, ensure_ascii=False)} is not {what}: {reason}", path
        )
    return text


def _name_list(
    value: object, path: str, what: str, problem: _Problem, allow_empty: bool
) -> list[str]:
    if not isinstance(value, list | tuple):
        raise TxValidationError(f"must be a list of {what}s, not {_json_type(value)}", path)
    if not value and not allow_empty:
        raise TxValidationError(f"must list at least one {what}", path)
    return [
        _checked_name(item, _join(path, i), f"a {what}", problem) for i, item in enumerate(value)
    ]


def _check_keys(data: Mapping[Any, Any], allowed: Collection[str], path: str, what: str) -> None:
    for key in data:
        if key not in allowed:
            raise TxValidationError(
                f"unknown key {json.dumps(key) if isinstance(key, str) else repr(key)}; "
                f"{what} has the keys {', '.join(allowed)}",
                _join(path, key) if isinstance(key, str) else path,
            )


def _body_value(value: object, path: str, depth: int) -> BodyValue:
    """Check one body value whose lists and maps would sit at nesting `depth`."""
    if isinstance(value, str):
        return _expect_string(value, path, "a string")
    if isinstance(value, Mapping | list | tuple) and depth > MAX_BODY_DEPTH:
        raise TxValidationError(
            f"the body nests too deeply: at most {MAX_BODY_DEPTH} levels of maps and lists", path
        )
    if isinstance(value, Mapping):
        return _body_map(value, path, depth)
    if isinstance(value, list | tuple):
        return [_body_value(item, _join(path, i), depth + 1) for i, item in enumerate(value)]
    hint = ""
    if isinstance(value, bool | int | float) or value is None:
        hint = f'; write it as the string "{json.dumps(value)}"'
    raise TxValidationError(
        f"body values are strings, lists or maps, not {_json_type(value)}{hint}", path
    )


def _body_map(value: Mapping[Any, Any], path: str, depth: int) -> dict[str, BodyValue]:
    result: dict[str, BodyValue] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TxValidationError(f"field names are strings, not {_json_type(key)}", path)
        key_path = _join(path, key)
        if not key:
            raise TxValidationError("a field name cannot be empty", key_path)
        _expect_string(key, key_path, "a string")
        if depth == 1 and key == "from":
            raise TxValidationError(
                '"from" is reserved at the top of a body: put sources in the operation\'s "from"',
                key_path,
            )
        result[key] = _body_value(item, key_path, depth + 1)
    return result


def _validate_op(op: object, path: str) -> dict[str, Any]:
    if not isinstance(op, Mapping):
        raise TxValidationError(f"an operation must be an object, not {_json_type(op)}", path)
    name = op.get("op")
    if not isinstance(name, str) or name not in OPERATIONS:
        if "op" not in op:
            found = "nothing"
        elif isinstance(name, str):
            found = json.dumps(name, ensure_ascii=False)
        else:
            found = _json_type(name)
        raise TxValidationError(
            f"expected one of {', '.join(OPERATIONS)}; found {found}", _join(path, "op")
        )
    keys = OPERATIONS[name]
    _check_keys(op, ("op", *keys), path, f"a {name} operation")
    for key in keys:
        if key not in op and key != "from":
            raise TxValidationError(f"missing; a {name} operation needs it", _join(path, key))
    if name in ("derive", "revise"):
        body = op["body"]
        if not isinstance(body, Mapping):
            raise TxValidationError(
                f"must be an object (the frame's fields), not {_json_type(body)}",
                _join(path, "body"),
            )
        return {
            "op": name,
            "id": _checked_name(op["id"], _join(path, "id"), "a frame id", _frame_id_problem),
            "from": _name_list(op.get("from", []), _join(path, "from"), "ref", _ref_problem, True),
            "body": _body_map(body, _join(path, "body"), 1),
        }
    if name in ("relate", "unrelate"):
        return {
            "op": name,
            "subject": _checked_name(
                op["subject"], _join(path, "subject"), "a frame id", _frame_id_problem
            ),
            "name": _checked_name(
                op["name"], _join(path, "name"), "a relation name", _relation_name_problem
            ),
            "object": _checked_name(
                op["object"], _join(path, "object"), "a frame id", _frame_id_problem
            ),
        }
    if name == "retire":
        refs = _name_list(op["refs"], _join(path, "refs"), "ref", _ref_problem, False)
        return {"op": name, "refs": refs}
    problem = _frame_id_problem if name in ("protect", "unprotect") else _ref_problem
    what = "frame id" if name in ("protect", "unprotect") else "ref"
    return {"op": name, "ids": _name_list(op["ids"], _join(path, "ids"), what, problem, False)}


def validate_json(data: object, *, ignore_keys: Collection[str] = ()) -> Transaction:
    """Check a JSON-form transaction and return a normalised copy with defaults filled in.

    `ignore_keys` names top-level keys that belong to the request rather than the transaction
    (e.g. ``{"evaluation"}``); they are dropped instead of refused.
    Raises `TxValidationError` naming the path of the first problem.
    """
    if not isinstance(data, Mapping):
        raise TxValidationError(
            f'a transaction must be an object with "ops", not {_json_type(data)}', ""
        )
    _check_keys(
        data,
        (*_TX_KEYS, *ignore_keys),
        "",
        "a transaction",
    )
    base_version = data.get("base_version")
    if base_version is not None and (
        isinstance(base_version, bool)
        or not isinstance(base_version, int)
        or not 0 <= base_version <= MAX_BASE_VERSION
    ):
        raise TxValidationError(
            f"must be a non-negative integer or null, not {_json_type(base_version)}",
            "base_version",
        )
    reason = data.get("reason")
    if reason is not None:
        _expect_string(reason, "reason", "a string or null")
    thread = data.get("thread")
    if thread is not None:
        _checked_name(thread, "thread", "a thread name", _thread_problem)
    if "ops" not in data:
        raise TxValidationError("missing; a transaction needs at least one operation", "ops")
    ops = data["ops"]
    if not isinstance(ops, list | tuple):
        raise TxValidationError(f"must be a list of operations, not {_json_type(ops)}", "ops")
    if not ops:
        raise TxValidationError("a transaction needs at least one operation", "ops")
    return {
        "base_version": base_version,
        "reason": reason,
        "thread": thread,
        "ops": [_validate_op(op, _join("ops", i)) for i, op in enumerate(ops)],
    }


# --------------------------------------------------------------------------- printer

# Printed bare: plain ASCII words. Any atom would read back the same, but the design document
# quotes prose, Chinese text and paths ("dist/"), and following it keeps its examples canonical.
_BARE_RE: Final = re.compile(r"[A-Za-z0-9._@:+-]+\Z")
# Control characters and the Unicode line separators would break the one-line layout.
_ESCAPE_RE: Final = re.compile('[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029]')
_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _format_string(value: str) -> str:
    """Bare when it is a plain word, else quoted, escaping only what must be escaped."""
    if _BARE_RE.match(value):
        return value
    return _quote(value)


def _quote(value: str) -> str:
    return '"' + _ESCAPE_RE.sub(_escape, value) + '"'


def _format_value(value: BodyValue) -> str:
    """A value in a position that holds values: element of a list, or a field's value."""
    if isinstance(value, str):
        return _format_string(value)
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
    return f"({_format_string(key)} {inner})"


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


def to_text(tx: Mapping[str, Any]) -> str:
    """The canonical text of a JSON-form transaction (validated first)."""
    checked = validate_json(tx)
    lines = ["(context-tx"]
    if checked["base_version"] is not None:
        lines.append(f"  (base-version {checked['base_version']})")
    if checked["reason"] is not None:
        # The reason is prose, so it is always quoted, as in the design document.
        lines.append(f"  (reason {_quote(checked['reason'])})")
    if checked["thread"] is not None:
        lines.append(f"  (thread {_format_string(checked['thread'])})")
    lines.extend(f"  {_format_op(op)}" for op in checked["ops"])
    return "\n".join(lines) + ")"


def canonicalize(text: str) -> str:
    """The canonical text of a text-form transaction (raises `TxParseError`)."""
    return to_text(parse_text(text))
