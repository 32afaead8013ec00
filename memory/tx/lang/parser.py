"""The parser of the text form: lexemes to the JSON form, with errors naming line and column."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from memory.errors import InvalidRequest
from memory.limits import MAX_OPS
from memory.tx.lang.lexer import ATOM, CLOSER, EOF, STRING, Lexeme, lex
from memory.tx.lang.names import (
    HEADERS,
    MAX_BASE_VERSION,
    MAX_BODY_DEPTH,
    OPERATIONS,
    BodyValue,
    Transaction,
    TxParseError,
    frame_id_problem,
    ref_problem,
    relation_name_problem,
    thread_problem,
)
from memory.tx.lang.printer import format_string


def _describe(token: Lexeme) -> str:
    if token.kind == EOF:
        return "end of input"
    shown = token.text if len(token.text) <= 40 else token.text[:40] + "…"
    quoted = json.dumps(shown, ensure_ascii=False)
    return f"the string {quoted}" if token.kind == STRING else quoted


def _height(value: BodyValue) -> int:
    """Levels of maps and lists in `value` (a string has none)."""
    if isinstance(value, str):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_height(child) for child in children), default=0)


class _Parser:
    def __init__(self, text: str) -> None:
        self._tokens = lex(text)
        self._ahead = next(self._tokens)

    def _next(self) -> Lexeme:
        token = self._ahead
        if token.kind != EOF:
            self._ahead = next(self._tokens)
        return token

    def _peek(self) -> Lexeme:
        return self._ahead

    @staticmethod
    def _error(token: Lexeme, message: str, expected: str | None = None) -> TxParseError:
        return TxParseError(message, token.line, token.column, expected)

    def _unexpected(self, token: Lexeme, expected: str, opener: Lexeme, label: str) -> TxParseError:
        """`token` is not what the form `label` (opened by `opener`) can hold at this point."""
        if token.kind == EOF:
            close = CLOSER[opener.kind]
            return self._error(
                token,
                f'unexpected end of input: expected {expected}; add "{close}" to close '
                f'"{label}" opened at line {opener.line}, column {opener.column}',
                expected,
            )
        return self._error(token, f"expected {expected}, found {_describe(token)}", expected)

    def _close(self, opener: Lexeme, label: str) -> None:
        token = self._next()
        if token.kind != ")":
            raise self._unexpected(token, f'")" to end "{label}"', opener, label)

    def _word(self, opener: Lexeme, label: str, expected: str) -> Lexeme:
        token = self._next()
        if token.kind not in (ATOM, STRING):
            raise self._unexpected(token, expected, opener, label)
        return token

    def _checked(self, token: Lexeme, expected: str, problem: str | None) -> str:
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
        if head.kind != ATOM or head.text != "context-tx":
            raise self._unexpected(head, '"context-tx"', opener, "(")
        label = "(context-tx"
        tx: Transaction = {"base_version": None, "reason": None, "thread": None, "ops": []}
        seen_headers: dict[str, Lexeme] = {}
        while True:
            clause = self._next()
            if clause.kind == ")":
                break
            if clause.kind != "(":
                raise self._unexpected(clause, 'an operation like "(derive" or ")"', opener, label)
            name = self._next()
            if name.kind != ATOM:
                raise self._unexpected(name, "an operation name", clause, "(")
            if name.text in HEADERS:
                self._check_header_place(name, tx, seen_headers)
                self._header(name.text, clause, tx)
            elif name.text in OPERATIONS:
                if len(tx["ops"]) == MAX_OPS:
                    # Refused at the first operation too many, before the rest is read.
                    raise InvalidRequest(
                        f"a transaction may hold at most {MAX_OPS} operations; operation "
                        f"{MAX_OPS + 1} starts at line {name.line}, column {name.column}",
                        details=[{"line": name.line, "column": name.column}],
                    )
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
        if trailing.kind != EOF:
            raise self._error(
                trailing,
                f"unexpected text after the end of the transaction: found {_describe(trailing)}; "
                f'the ")" at line {clause.line}, column {clause.column} already closed '
                '"(context-tx"',
                "end of input",
            )
        return tx

    def _check_header_place(
        self, name: Lexeme, tx: Transaction, seen_headers: dict[str, Lexeme]
    ) -> None:
        """Headers come once each, before the operations."""
        if tx["ops"]:
            raise self._error(name, f'the header "({name.text}" must come before the operations')
        if name.text in seen_headers:
            first = seen_headers[name.text]
            raise self._error(
                name,
                f'duplicate header "({name.text}"; it was already given at line '
                f"{first.line}, column {first.column}",
            )
        seen_headers[name.text] = name

    def _header(self, name: str, opener: Lexeme, tx: Transaction) -> None:
        label = f"({name}"
        if name == "base-version":
            token = self._word(opener, label, "a non-negative integer")
            if token.kind != ATOM or not re.fullmatch(r"[0-9]+", token.text):
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
            tx["thread"] = self._checked(token, "a thread name", thread_problem(token.text))
        token = self._peek()
        if token.kind in (ATOM, STRING):
            raise self._error(
                token,
                f'"{label}" takes a single value; put text with spaces in double quotes',
                '")"',
            )
        self._close(opener, label)

    def body(self) -> dict[str, BodyValue]:
        """The whole text as the fields of one top-level body, through the end of input."""
        start = self._peek()
        return self._entries(EOF, Lexeme("(", "", start.line, start.column), "the body", 1)

    # ----------------------------------------------------------------- operations

    def _operation(self, name: str, opener: Lexeme) -> dict[str, Any]:
        label = f"({name}"
        if name in ("derive", "revise"):
            token = self._word(opener, label, "a frame id")
            frame_id = self._checked(token, "a frame id", frame_id_problem(token.text))
            sources: list[str] = []
            body = self._entries(")", opener, label, 1, sources)
            return {"op": name, "id": frame_id, "from": sources, "body": body}
        if name in ("relate", "unrelate"):
            token = self._word(opener, label, "the subject frame id")
            subject = self._checked(token, "a frame id", frame_id_problem(token.text))
            token = self._word(opener, label, "a relation name")
            relation = self._checked(token, "a relation name", relation_name_problem(token.text))
            token = self._word(opener, label, "the object frame id")
            target = self._checked(token, "a frame id", frame_id_problem(token.text))
            token = self._peek()
            if token.kind in (ATOM, STRING):
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

    def _refs(self, opener: Lexeme, label: str, frames_only: bool) -> list[str]:
        """One or more refs up to and including the closing ")"."""
        expected = "a frame id" if frames_only else "a ref (@eN or a frame id)"
        refs: list[str] = []
        while True:
            token = self._next()
            if token.kind == ")" and refs:
                return refs
            if token.kind == ")":
                raise self._error(token, f'"{label}" needs at least one ref: {expected}', expected)
            if token.kind not in (ATOM, STRING):
                raise self._unexpected(token, f'{expected} or ")"', opener, label)
            check = frame_id_problem if frames_only else ref_problem
            refs.append(self._checked(token, expected, check(token.text)))

    # ----------------------------------------------------------------- bodies

    def _entries(
        self,
        closer: str,
        opener: Lexeme,
        label: str,
        depth: int,
        sources: list[str] | None = None,
    ) -> dict[str, BodyValue]:
        """The fields of a map at nesting `depth`, up to and including `closer`.

        `sources` is given only for the top of a derive/revise body, where a leading
        ``(from ...)`` is the sources clause; it receives the refs.
        """
        result: dict[str, BodyValue] = {}
        keys: dict[str, Lexeme] = {}
        seen_from = False
        while True:
            token = self._next()
            if token.kind == closer:
                return result
            if token.kind != "(":
                end = "the end of the body" if closer == EOF else f'"{closer}"'
                raise self._unexpected(token, f"a field like (key value) or {end}", opener, label)
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

    def _field_value(self, opener: Lexeme, key: str, depth: int) -> BodyValue:
        """The value of the field opened by `opener` in a map at `depth`, through its ")"."""
        label = f"({format_string(key)}"
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

    def _value(self, token: Lexeme, depth: int, opener: Lexeme, label: str) -> BodyValue:
        """One value starting at `token`; a list or map made here sits at `depth`."""
        if token.kind in (ATOM, STRING):
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

    def _too_deep(self, token: Lexeme) -> TxParseError:
        return self._error(
            token, f"the body nests too deeply: at most {MAX_BODY_DEPTH} levels of maps and lists"
        )


def _unknown_clause_message(name: str) -> str:
    message = (
        f"unknown operation {json.dumps(name, ensure_ascii=False)}; the operations are "
        f"{', '.join(OPERATIONS)} and the headers are {', '.join(HEADERS)}"
    )
    close = difflib.get_close_matches(name.lower(), [*OPERATIONS, *HEADERS], n=1, cutoff=0.6)
    return f'{message}; did you mean "{close[0]}"?' if close else message


def parse_text(text: str) -> Transaction:
    """Parse the text form into the JSON form, or raise `TxParseError` saying where and why."""
    if not isinstance(text, str):
        raise TypeError(f"parse_text() needs a str, not {type(text).__name__}")
    return _Parser(text).parse()


def parse_body(text: str) -> dict[str, BodyValue]:
    """The fields text of one body (``(key value) ...``, as `fields_text` prints it) as a map,
    or `TxParseError` saying where and why. Only fields are read: a ``)`` that would close an
    enclosing form, an operation or a header is refused, so the text is never more than a
    body. ``from`` is an ordinary key here (the JSON form then refuses it at the top)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_body() needs a str, not {type(text).__name__}")
    return _Parser(text).body()
