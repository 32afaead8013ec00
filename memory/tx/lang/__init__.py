"""The context-transaction language (R9, R10): the text form a model writes and the JSON form
REST clients send; grammar, names and canonical text in docs/transactions.md.

`parse_text` reads text into the JSON form, `validate_json` checks and normalises the JSON
form, `to_text` prints the canonical text; round trips are exact both ways. Modules: `names`
(constants, errors, name checks), `lexer` (text to lexemes), `parser` (text to JSON form),
`jsonform` (validation), `printer` (JSON form to canonical text).
"""

from __future__ import annotations

from memory.tx.lang.jsonform import validate_json
from memory.tx.lang.names import (
    MAX_BASE_VERSION,
    MAX_BODY_DEPTH,
    OPERATIONS,
    BodyValue,
    Transaction,
    TxError,
    TxParseError,
    TxValidationError,
)
from memory.tx.lang.parser import parse_body, parse_text
from memory.tx.lang.printer import canonical_text, fields_text, to_text

__all__ = [
    "MAX_BASE_VERSION",
    "MAX_BODY_DEPTH",
    "OPERATIONS",
    "BodyValue",
    "Transaction",
    "TxError",
    "TxParseError",
    "TxValidationError",
    "canonical_text",
    "canonicalize",
    "fields_text",
    "parse_body",
    "parse_text",
    "to_text",
    "validate_json",
]


def canonicalize(text: str) -> str:
    """The canonical text of a text-form transaction (raises `TxParseError`)."""
    return to_text(parse_text(text))
