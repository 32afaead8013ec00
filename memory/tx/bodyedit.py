"""A person's new body for one frame (the explorer's "edit body" form), committed as one
revise of that frame and nothing else.

The text a person typed is read as a body alone: S-expression fields with the transaction
language's body parser, or a JSON object read strictly. It is never pasted into transaction
text, so a stray ``)`` cannot close the revise and start another operation.
"""

from __future__ import annotations

from typing import Any, Literal

from memory.errors import InvalidField, InvalidRequest, ParseError
from memory.strictjson import read_json
from memory.tx import lang as txlang
from memory.tx.engine import SYSTEM, Author, CommitResult, submit_transaction

BodyForm = Literal["fields", "json"]
BODY_FORMS: tuple[BodyForm, ...] = ("fields", "json")


_TEXT = {"field": "text"}
_BODY_PATH = "ops[0].body"


def parse_body_text(text: str, form: BodyForm) -> dict[str, Any]:
    """The body map written as `text` in `form` ("fields": ``(key value) ...``; "json": one
    JSON object). Raises ParseError (malformed, with line and column) or InvalidRequest (a
    JSON key given twice, or JSON that is not an object), their details naming `text`."""
    if form == "json":
        try:
            body = read_json(text)
        except (InvalidRequest, ParseError) as exc:
            place = next((d["field"] for d in exc.details if "field" in d), None)
            raise type(exc)(
                f"text: {exc.message}" + (f" (at {place})" if place else ""),
                code=exc.code,
                details=[
                    {**_TEXT, **{k: v for k, v in d.items() if k != "field"}} for d in exc.details
                ]
                or [_TEXT],
            ) from None
        if not isinstance(body, dict):
            raise InvalidRequest(
                "text: the body must be a JSON object (a map of fields)", details=[_TEXT]
            )
        return body
    if form != "fields":
        raise InvalidRequest(
            f"unknown body form {form!r}; use one of {', '.join(BODY_FORMS)}",
            details=[{"field": "form"}],
        )
    try:
        return txlang.parse_body(text)
    except txlang.TxParseError as exc:
        raise ParseError(
            str(exc),
            details=[{**_TEXT, "line": exc.line, "column": exc.column, "expected": exc.expected}],
        ) from None


def _check_edit(frame_id: str, body: dict[str, Any]) -> None:
    """The revise a body edit commits, checked before it is submitted so that its errors name
    what the client sent (`frame_id` from the path, the body as `text`), not `ops[0]`."""
    try:
        txlang.validate_json({"ops": [{"op": "revise", "id": frame_id, "body": body}]})
    except txlang.TxValidationError as exc:
        if exc.path == "ops[0].id":
            raise InvalidField("frame_id", f"frame_id: {exc.message}") from None
        inside = exc.path.removeprefix(_BODY_PATH).lstrip(".")
        raise InvalidRequest(
            f"text: {inside}: {exc.message}" if inside else f"text: {exc.message}",
            details=[_TEXT],
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
    _check_edit(frame_id, body)
    tx = {
        "base_version": base_version,
        "reason": reason,
        "ops": [{"op": "revise", "id": frame_id, "body": body}],
    }
    return submit_transaction(context_id, data=tx, author=author)
