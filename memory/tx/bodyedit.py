"""A person's new body for one frame (the explorer's "edit body" form), committed as one
revise of that frame and nothing else.

The text a person typed is read as a body alone: S-expression fields with the transaction
language's body parser, or a JSON object read strictly. It is never pasted into transaction
text, so a stray ``)`` cannot close the revise and start another operation.
"""

from __future__ import annotations

from typing import Any, Literal

from memory.errors import InvalidRequest, ParseError
from memory.strictjson import read_json
from memory.tx import lang as txlang
from memory.tx.engine import SYSTEM, Author, CommitResult, submit_transaction

BodyForm = Literal["fields", "json"]
BODY_FORMS: tuple[BodyForm, ...] = ("fields", "json")


def parse_body_text(text: str, form: BodyForm) -> dict[str, Any]:
    """The body map written as `text` in `form` ("fields": ``(key value) ...``; "json": one
    JSON object). Raises ParseError (malformed, with line and column) or InvalidRequest (a
    JSON key given twice, or JSON that is not an object)."""
    if form == "json":
        body = read_json(text)
        if not isinstance(body, dict):
            raise InvalidRequest("the body must be a JSON object (a map of fields)")
        return body
    if form != "fields":
        raise InvalidRequest(f"unknown body form {form!r}; use one of {', '.join(BODY_FORMS)}")
    try:
        return txlang.parse_body(text)
    except txlang.TxParseError as exc:
        raise ParseError(
            str(exc), details=[{"line": exc.line, "column": exc.column, "expected": exc.expected}]
        ) from None


def revise_body(
    context_id: int,
    *,
    frame_id: str,
    text: str,
    form: BodyForm,
    base_version: int | None,
    reason: str | None,
    author: Author = SYSTEM,
) -> CommitResult:
    """Commit one transaction revising `frame_id` to the body written as `text` (see
    `parse_body_text`); errors as `parse_body_text` and `submit_transaction` raise them
    (Conflict when the context moved past `base_version`)."""
    body = parse_body_text(text, form)
    tx = {
        "base_version": base_version,
        "reason": reason,
        "ops": [{"op": "revise", "id": frame_id, "body": body}],
    }
    return submit_transaction(context_id, data=tx, author=author)
