"""The error shape every refusal is answered with: the API's body, a reply's failed part."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from memory.errors import ErrorCode
from memory.shapes.fields import Choices, Doc


class ErrorJson(TypedDict):
    code: Annotated[
        str,
        Choices(tuple(code.value for code in ErrorCode)),
        Doc("stable machine-readable code, e.g. `conflict`"),
    ]
    message: Annotated[str, Doc("what went wrong and what to do, for a model")]
    details: Annotated[
        list[Any],
        Doc(
            "structured details: failing operations with `index`, parse `line`/`column`, "
            "changed items of a conflict, invalid `field`s"
        ),
    ]


class ErrorBody(TypedDict):
    error: ErrorJson


class FieldProblem(TypedDict):
    """A detail of a refused request: the failing field, named as the API names a place in
    a body (`events[1].kind`; "" for the body itself), and what is wrong with it."""

    field: str
    message: str
    reason: NotRequired[str]  # a refused cursor's (`memory.requests.refusals.with_reasons`)
    min: NotRequired[str]  # the bounds of a time out of range (`memory.times.read_time`)
    max: NotRequired[str]


def error_json(code: str, message: str, details: list[Any] | None = None) -> ErrorJson:
    """An error: its stable `code`, a `message` for a model, and structured `details`."""
    return {"code": code, "message": message, "details": details or []}


def error_body(code: str, message: str, details: list[Any] | None = None) -> ErrorBody:
    """The API's answer to a refused request: `{"error": {code, message, details}}`."""
    return {"error": error_json(code, message, details)}
