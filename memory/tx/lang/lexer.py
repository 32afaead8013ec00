"""The lexer of the text form: lexemes (atoms, strings (JSON escapes), punctuation) with positions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final, NamedTuple

from memory.tx.lang.names import FORBIDDEN_RE, TxParseError, forbidden_char_problem, quote_char

ATOM: Final = "atom"
STRING: Final = "string"
EOF: Final = "end"
CLOSER: Final = {"(": ")", "[": "]", "{": "}"}


class Lexeme(NamedTuple):
    kind: str  # ATOM, STRING, EOF, or the punctuation character itself
    text: str  # the atom, or the string's decoded value
    line: int
    column: int


# One lexeme (or a run of spaces, or a comment to the end of its line) from where it starts:
# one match per lexeme, the alternative that matched named by `lastgroup`.
_TOKEN_RE: Final = re.compile(
    r"(?P<newline>\n)|(?P<skip>[^\S\n]+|;[^\n]*)|(?P<punctuation>[()\[\]{}])|(?P<string>\")"
    r'|(?P<atom>[^\s()\[\]{}";]+)'
)
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_STRING_RUN_RE: Final = re.compile(r'[^"\\\n]+')
_HEX4_RE: Final = re.compile(r"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES: Final = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


def _position(text: str, index: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def lex(text: str) -> Iterator[Lexeme]:
    """The lexemes of `text`, made as the parser asks for them: a parser that stops early (an
    error, too many operations) never pays for the rest of a large text."""
    bad = FORBIDDEN_RE.search(text)
    if bad is not None:
        raise TxParseError(forbidden_char_problem(bad.group()), *_position(text, bad.start()))
    length = len(text)
    # A byte-order mark at the very start is an editor artefact, not content.
    index = line_start = 1 if text.startswith("\ufeff") else 0
    line = 1
    next_token = _TOKEN_RE.match
    while index < length:
        found = next_token(text, index)
        assert found is not None  # every character starts one of the token's alternatives
        kind = found.lastgroup
        if kind == "newline":
            index += 1
            line += 1
            line_start = index
            continue
        if kind == "skip":
            index = found.end()
            continue
        column = index - line_start + 1
        if kind == "punctuation":
            char = text[index]
            yield Lexeme(char, char, line, column)
            index += 1
        elif kind == "string":
            value, index, end_line, line_start = _read_string(text, index, line, line_start)
            yield Lexeme(STRING, value, line, column)
            line = end_line
        else:
            atom = found.group()
            control = _CONTROL_RE.search(atom)
            if control is not None:
                raise TxParseError(
                    f"control character {quote_char(control.group())} is not allowed outside "
                    "a string",
                    line,
                    column + control.start(),
                )
            yield Lexeme(ATOM, atom, line, column)
            index = found.end()
    yield Lexeme(EOF, "", line, index - line_start + 1)


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
            raise _unterminated(open_line, open_column)
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
            raise _unterminated(open_line, open_column)
        else:
            shown = (
                f"\\{escape}" if escape.isprintable() else f"\\ followed by {quote_char(escape)}"
            )
            raise TxParseError(
                f'unknown escape "{shown}" in a string; the escapes are \\" \\\\ \\n \\t \\r '
                "and \\uXXXX (write \\\\ for a backslash)",
                line,
                column,
                "an escape",
            )


def _unterminated(line: int, column: int) -> TxParseError:
    """The error for a string whose closing quote never comes, placed at its opening one."""
    return TxParseError(
        'unterminated string: no closing " for the string that starts here', line, column, '"'
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
        raise TxParseError(forbidden_char_problem("\x00"), line, column)
    if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", index + 6):
        low = _HEX4_RE.match(text, index + 8)
        if low is not None and 0xDC00 <= int(low.group(), 16) <= 0xDFFF:
            combined = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
            return chr(combined), index + 12
    if 0xD800 <= code <= 0xDFFF:
        raise TxParseError(forbidden_char_problem(chr(code)), line, column)
    return chr(code), index + 6
