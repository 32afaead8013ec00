"""The context-transaction language (R9, R10; docs/transactions.md).

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

Decisions beyond the rules' wording:

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

Modules: `names` (constants, errors, name checks), `lexer` (text to lexemes), `parser` (text to
JSON form), `jsonform` (validation), `printer` (JSON form to canonical text).
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
