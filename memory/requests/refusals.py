"""A request model's refusal as the error a client gets: a stable code, a message naming the
first failing field, and `details` naming each failing field the one way the API names a
place in a body (`events[1].kind`, `payload.a`).

How it works: docs/internals.md, section `memory/requests/refusals.py`."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from memory.errors import ErrorCode, InvalidRequest, MorphzError, field_code
from memory.requests.strict import PATTERN_MESSAGES, text_problem
from memory.shapes.errors import FieldProblem

UNKNOWN_FIELD = "unknown field"


def validation_code(details: Sequence[FieldProblem]) -> ErrorCode:
    """The code of a validation failure whose `details` name the failing fields."""
    codes = set()
    for item in details:
        if item.get("message") == UNKNOWN_FIELD:
            return ErrorCode.INVALID_REQUEST
        codes.add(field_code(str(item.get("field", ""))))
    return codes.pop() if len(codes) == 1 else ErrorCode.INVALID_REQUEST


def place(loc: Sequence[int | str]) -> str:
    """A location as the API names it: `events[1].kind`, `payload.a`, "" for the body."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_MESSAGES = {
    "missing": "This field is required.",
    "string_type": "Not a valid string.",
    "int_type": "A valid integer is required.",
    "int_from_float": "A valid integer is required.",
    "bool_type": "Must be a valid boolean.",
    "less_than_equal": "Ensure this value is less than or equal to {le}.",
    "greater_than_equal": "Ensure this value is greater than or equal to {ge}.",
    "string_too_long": "Ensure this field has no more than {max_length} characters.",
    "too_long": "Ensure this field has no more than {max_length} elements.",
    "literal_error": '"{input}" is not a valid choice; one of: {expected}.',
    "extra_forbidden": UNKNOWN_FIELD,
}
_OBJECT_TYPES = frozenset({"model_type", "dict_type", "model_attributes_type"})


def message(error: ErrorDetails) -> str:
    """What is wrong with one value, in the words REST framework used for it."""
    kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
    if kind in _OBJECT_TYPES:
        if given is None and not error["loc"]:
            return "No data provided"
        return f"Invalid data. Expected a dictionary, but got {type(given).__name__}."
    if given is None and kind != "missing":
        return "This field may not be null."
    if kind == "string_unicode" and isinstance(given, str):  # a constrained str's own check
        return text_problem(given) or error["msg"]
    if kind == "string_pattern_mismatch":
        return PATTERN_MESSAGES.get(ctx.get("pattern", ""), error["msg"])
    if kind == "string_too_short":
        if ctx.get("min_length") == 1:
            return "This field may not be blank."
        return f"Ensure this field has at least {ctx.get('min_length')} characters."
    if kind == "too_long" and isinstance(given, str):  # a constrained str's own length check
        return f"Ensure this field has no more than {ctx.get('max_length')} characters."
    if kind == "too_short" and isinstance(given, str):  # a constrained str's own length check
        return "This field may not be blank." if ctx.get("min_length") == 1 else error["msg"]
    if kind == "too_short":
        return "This list may not be empty." if ctx.get("min_length") == 1 else error["msg"]
    if kind == "list_type":
        return f'Expected a list of items but got type "{type(given).__name__}".'
    template = _MESSAGES.get(kind)
    if template is None:
        return error["msg"].removeprefix("Value error, ")
    return template.format(input=given, **ctx)


def with_reasons(details: list[FieldProblem]) -> list[FieldProblem]:
    """`details` with each refused cursor's reason: a cursor refused before it is read (blank,
    too long, holding NUL) is ``malformed``, as every cursor refusal names its reason
    (`memory.read.paging.SignedCursor.refused`)."""
    for detail in details:
        if field_code(detail["field"]) == ErrorCode.INVALID_CURSOR:
            detail["reason"] = "malformed"
    return details


def problem(error: ErrorDetails) -> FieldProblem:
    """One failing field: its place, what is wrong, and the bounds it names, if any (a time
    out of range names `min` and `max`)."""
    out = FieldProblem(field=place(error["loc"]), message=message(error))
    ctx = error.get("ctx") or {}
    if "min" in ctx and "max" in ctx:
        out["min"], out["max"] = ctx["min"], ctx["max"]
    return out


def ordered(exc: ValidationError) -> list[ErrorDetails]:
    """The failures, unknown fields first (a typo explains the rest), then in field order."""
    errors = exc.errors(include_url=False)
    return sorted(errors, key=lambda error: error["type"] != "extra_forbidden")


def refusal(exc: ValidationError) -> MorphzError:
    """The error a client gets for a request its model refused."""
    errors = ordered(exc)
    unknown = any(error["type"] == "extra_forbidden" for error in errors)
    too_large = next((e for e in errors if e["type"] == ErrorCode.TOO_LARGE), None)
    if too_large is not None and not unknown:
        field, ctx = place(too_large["loc"]), too_large.get("ctx") or {}
        return MorphzError(
            f"{field} {message(too_large)}",
            code=ErrorCode.TOO_LARGE,
            details=[{"field": field, "limit_chars": ctx.get("limit_chars")}],
        )
    details = with_reasons([problem(error) for error in errors])
    first = details[0]
    return InvalidRequest(
        f"{first['field']}: {first['message']}" if first["field"] else first["message"],
        code=validation_code(details),
        details=details,
    )
