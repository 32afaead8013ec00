"""The strict value types every request model is built from: one rule per kind of value.

Text is taken as written (no trimming: " main " is not the thread "main") and must be text
(`{"thread": 123}` is not "123"); an integer is a JSON number without a fraction (not a
boolean, not `2.0`, not `"2"`), a flag a JSON `true` or `false`. A query string carries text
only, so its integers and flags have their own forms (`QueryInt`, `QueryFlag`), read as
strictly. Text PostgreSQL cannot store (NUL, a lone surrogate) is refused everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainValidator,
    ValidationInfo,
)
from pydantic.json_schema import WithJsonSchema
from pydantic_core import PydanticCustomError, core_schema

from memory.errors import ErrorCode, InvalidField
from memory.limits import MAX_CONTENT_CHARS
from memory.times import read_time
from memory.vocabulary import EVENT_REF_RE, MAX_SEQ, THREAD_MAX, THREAD_RE

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """What keeps PostgreSQL from storing `text` (a NUL or a lone surrogate), or None; one
    regular-expression search however long the text is."""
    if "\x00" in text:
        return "text must not contain NUL"
    found = _SURROGATE.search(text)
    if found is not None:
        return f"text holds a lone surrogate (U+{ord(found.group()):04X})"
    return None


def _storable(text: str) -> str:
    problem = text_problem(text)
    if problem is not None:
        raise PydanticCustomError("surrogate_characters_not_allowed", problem)
    return text


def _content_size(text: str) -> str:
    if len(text) > MAX_CONTENT_CHARS:
        raise PydanticCustomError(
            ErrorCode.TOO_LARGE,
            "is {chars} characters, over the limit of {limit_chars}; nothing was written",
            {"chars": len(text), "limit_chars": MAX_CONTENT_CHARS},
        )
    return text


# Text of any length, blank included; `Name` is never blank. Bound them with Field(max_length).
Text = Annotated[str, AfterValidator(_storable)]
Name = Annotated[str, Field(min_length=1), AfterValidator(_storable)]
# Event content or transaction text: over MAX_CONTENT_CHARS is 413 `too_large`, like a body
# over the request size limit: the size is the problem, not the form.
Content = Annotated[
    str,
    AfterValidator(_content_size),
    AfterValidator(_storable),
    WithJsonSchema({"type": "string", "maxLength": MAX_CONTENT_CHARS}),
]
FilledContent = Annotated[
    str,
    Field(min_length=1),
    AfterValidator(_content_size),
    AfterValidator(_storable),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS}),
]

# A failing pattern answers this message, not the expression (a model reads it).
PATTERN_MESSAGES: dict[str, str] = {}


def anchored(pattern: re.Pattern[str] | str, message: str) -> str:
    """`pattern` matching whole text (as `fullmatch`), its failure answered with `message`."""
    text = pattern if isinstance(pattern, str) else pattern.pattern
    whole = rf"^(?:{text})$"
    PATTERN_MESSAGES[whole] = message
    return whole


_THREAD = anchored(THREAD_RE, "1-100 characters: letters, digits, '.', '_', ':', '-'")
_EVENT_REF = anchored(EVENT_REF_RE, 'not an event reference like "@e17"')
_SLUG = anchored(
    r"[-a-zA-Z0-9_]+",
    'Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.',
)
ThreadName = Annotated[
    str, Field(min_length=1, max_length=THREAD_MAX, pattern=_THREAD), AfterValidator(_storable)
]
# An event ref or a frame id; its form is checked by `memory.read.history.check_ref`, whose
# code says which it failed to be (`invalid_ref`, `invalid_frame_id`).
SourceRef = Annotated[str, Field(min_length=1, max_length=140), AfterValidator(_storable)]
EventRef = Annotated[
    str, Field(min_length=1, max_length=40, pattern=_EVENT_REF), AfterValidator(_storable)
]
Slug = Annotated[str, Field(min_length=1, max_length=64, pattern=_SLUG), AfterValidator(_storable)]


@dataclass(frozen=True)
class Choice:
    """One of `values`, exactly (5 is not "5", " active" is not "active"): the metadata of
    `Annotated[str, Choice(values)]`."""

    values: tuple[str, ...]

    def chosen(self, value: Any) -> str:
        """`value` when it is one of the choices; the refusal otherwise."""
        if isinstance(value, str) and value in self.values:
            return value
        if value is None:
            raise PydanticCustomError("string_type", "This field may not be null.")
        raise PydanticCustomError(
            "invalid_choice", f'"{value}" is not a valid choice; one of: {", ".join(self.values)}.'
        )

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.no_info_before_validator_function(self.chosen, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> Any:
        return {"type": "string", "enum": list(self.values)}


def _refuse_null(value: Any) -> Any:
    if value is None:
        raise PydanticCustomError("null", "This field may not be null.")
    return value


class NeverNull:
    """Optional but never null: `Annotated[T | None, NotNull] = None` reads None when the
    field is absent and refuses an explicit null (a null where a value belongs is a client's
    mistake). The schema says what a client may send: T, not nullable."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.no_info_before_validator_function(_refuse_null, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> Any:
        out = dict(handler(schema))
        out.pop("nullable", None)
        if list(out) == ["allOf"]:
            return out["allOf"][0]
        return out


NotNull: Final = NeverNull()


# No sign: every query integer is a count, a size or a version, none negative (`-0` is no 0).
_QUERY_INT: Final = re.compile(r"[0-9]{1,20}")
_SIGNED_INT: Final = re.compile(r"[+-][0-9]+")
_QUERY_TRUE: Final = frozenset({"t", "y", "yes", "true", "on", "1"})
_QUERY_FALSE: Final = frozenset({"f", "n", "no", "false", "off", "0"})


def _query_int(value: Any) -> Any:
    """ASCII digits alone (not `+3`, `-0`, ` 3`, `1.0` or `３`)."""
    if isinstance(value, str) and _QUERY_INT.fullmatch(value):
        return int(value)
    if isinstance(value, str) and _SIGNED_INT.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Must be written in digits, without a sign.")
    if isinstance(value, str) and value.isascii() and value.isdigit():
        raise PydanticCustomError(
            "int_parsing", "Too large: at most 20 digits (no field takes more than 2**63 - 1)."
        )
    raise PydanticCustomError("int_parsing", "A valid integer is required (digits alone).")


def _query_flag(value: Any) -> bool:
    """The usual spellings of a flag in a query string: true/false, 1/0, yes/no, on/off."""
    spelled = value.lower() if isinstance(value, str) else None
    if spelled in _QUERY_TRUE:
        return True
    if spelled in _QUERY_FALSE:
        return False
    raise PydanticCustomError("bool_parsing", "Must be a valid boolean.")


Seq = Annotated[int, Field(ge=0, le=MAX_SEQ)]
QueryInt = BeforeValidator(_query_int)
QueryFlag = Annotated[bool, BeforeValidator(_query_flag)]
QuerySeq = Annotated[int, QueryInt, Field(ge=0, le=MAX_SEQ)]


def _time(value: Any, info: ValidationInfo) -> datetime:
    """`value` read by `memory.times.read_time`, which holds the rule; its refusal as a field
    error like any other, with the facts it names (`min`, `max`)."""
    try:
        return read_time(value, info.field_name or "")
    except InvalidField as exc:
        facts = {k: v for k, v in exc.details[0].items() if k != "field"}
        raise PydanticCustomError(
            exc.code, "{message}", {"message": exc.message, **facts}
        ) from None


# A time from a query string: read as its instant in UTC, refused in the same pass as the
# other fields (not a date type: it would read a date alone or a local time as UTC).
Time = Annotated[
    datetime,
    PlainValidator(_time),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 40}),
]
