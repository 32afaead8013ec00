"""The API's strict field types and field factories (one rule per kind of value).

Strict on purpose: text must be text and integers integers (no `{"thread": 123}` read as
"123", no `"2"` or `2.0` read as 2), thread names follow the one thread rule, content has
the one content limit. `api.serializers` builds the request serializers from these.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from api.errors import ApiError
from memory.errors import ErrorCode
from memory.limits import MAX_CONTENT_CHARS
from memory.read.paging import CURSOR_HELP, CURSOR_MAX_CHARS
from memory.vocabulary import EVENT_REF_RE, FRAME_ID_RE, MAX_SEQ, THREAD_MAX, THREAD_RE

_SURROGATE = re.compile("[\ud800-\udfff]")


class _ProhibitSurrogates(ProhibitSurrogateCharactersValidator):
    """REST framework's surrogate check, same message and code, by one regular-expression
    search: its own loops over every character in Python (milliseconds for long content)."""

    def __call__(self, value: Any) -> None:
        found = _SURROGATE.search(str(value))
        if found is not None:
            raise ValidationError(
                self.message.format(code_point=ord(found.group())), code=self.code
            )


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of turning them into text
    ({"thread": 123} is not "123"), and takes text as written: surrounding spaces are not cut
    off (" main " is not the thread "main")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(*args, **kwargs)
        self.validators = [
            _ProhibitSurrogates() if isinstance(v, ProhibitSurrogateCharactersValidator) else v
            for v in self.validators
        ]

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


_QUERY_INT = re.compile(r"-?[0-9]{1,20}")


class StrictIntegerField(serializers.IntegerField):
    """An integer that is one: a JSON number without a fraction (not a boolean, not `2.0`,
    not `"2"`), or in a query string ASCII digits with an optional minus (not `+3`, ` 3`,
    `1.0` or `３`)."""

    def to_internal_value(self, data: Any) -> int:
        if self.context.get("source") == "query":
            if not isinstance(data, str) or not _QUERY_INT.fullmatch(data):
                self.fail("invalid")
        elif isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    """A flag that is one: a JSON `true` or `false` in a body (not `"true"`, `"yes"`, `1`),
    or in a query string the usual spellings (`true`/`false`, `1`/`0`, `yes`/`no`)."""

    def to_internal_value(self, data: Any) -> bool:
        if self.context.get("source") == "query":
            if not isinstance(data, str):
                self.fail("invalid", input=data)
            return bool(super().to_internal_value(data))
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictRegexField(StrictCharField, serializers.RegexField):
    """A RegexField that refuses numbers and booleans, as StrictCharField does."""


class StrictSlugField(StrictCharField, serializers.SlugField):
    """A SlugField that refuses numbers and booleans, as StrictCharField does."""


class ContentField(StrictCharField):
    """Event content or transaction text: at most MAX_CONTENT_CHARS characters (the one
    content limit, defined in memory.events). Longer is 413 `too_large`, like a body over
    MORPHZ_MAX_REQUEST_BYTES: the size is the problem, not the form."""

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, str) and len(data) > MAX_CONTENT_CHARS:
            raise ApiError(
                ErrorCode.TOO_LARGE,
                f"{self.field_name} is {len(data)} characters, over the limit of "
                f"{MAX_CONTENT_CHARS}; nothing was written",
                [{"field": self.field_name, "limit_chars": MAX_CONTENT_CHARS}],
            )
        return super().to_internal_value(data)


class StrictSerializer(serializers.Serializer):
    """A serializer that refuses fields it does not declare: they are named first, together
    with every other field that fails, so `details` names each failing field."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data.keys()) - set(self.fields)) if hasattr(data, "keys") else []
        failures: dict[str, Any] = {name: ["unknown field"] for name in unknown}
        try:
            value = super().to_internal_value(data)
        except ValidationError as exc:
            if not failures or not isinstance(exc.detail, dict):
                raise
            failures.update(exc.detail)
        except ApiError:  # a field's own refusal (content too large): unknown fields first
            if not failures:
                raise
        if failures:
            raise ValidationError(failures)
        return value


def evaluation_field(what: str) -> serializers.Field:
    """An optional evaluation id (`evaluation`)."""
    return StrictIntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_SEQ, help_text=f"id of {what}"
    )


def thread_field(*, filter: bool = False, **kwargs: Any) -> serializers.Field:
    """A thread name: the thread a write goes to (default `main`), or with `filter` the
    thread a listing or search keeps (default: every thread)."""
    return StrictRegexField(
        rf"\A(?:{THREAD_RE.pattern})\Z",
        required=False,
        allow_null=True,
        max_length=THREAD_MAX,
        help_text="execution thread (R8): 1-100 of letters, digits, '.', '_', ':', '-'; "
        + ("only this thread; default: every thread" if filter else "default `main`"),
        error_messages={"invalid": "1-100 characters: letters, digits, '.', '_', ':', '-'"},
        **kwargs,
    )


def source_field() -> serializers.Field:
    """A source a frame may cite: an event ref (`@e42`) or a frame id (R63)."""
    return StrictRegexField(
        rf"\A(?:{EVENT_REF_RE.pattern}|{FRAME_ID_RE.pattern})\Z",
        required=False,
        max_length=140,
        help_text="only frames citing this source (R63): an event ref like `@e42` or a frame id",
        error_messages={"invalid": "an event ref like @e42 or a frame id"},
    )


def idempotency_field() -> serializers.Field:
    return StrictCharField(
        required=False,
        allow_null=True,
        min_length=1,
        max_length=200,
        trim_whitespace=False,
        help_text="a retry with the same key returns the first result and writes nothing "
        "(the Idempotency-Key header works too)",
    )


def limit_field(default: int, maximum: int) -> serializers.Field:
    return StrictIntegerField(
        required=False, default=default, min_value=1, max_value=maximum, help_text="page size"
    )


def as_of_field() -> serializers.Field:
    return StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_SEQ,
        help_text="answer as of the end of this version (R52), from the history",
    )


def min_version_field() -> serializers.Field:
    return StrictIntegerField(
        required=False,
        min_value=0,
        max_value=MAX_SEQ,
        help_text="read-your-writes with replicas (R68): answer from a state that holds at "
        "least this version (the caller's last commit or evaluation); also the "
        "Morphz-Min-Version header",
    )


def cursor_field() -> serializers.Field:
    return StrictCharField(
        required=False,
        max_length=CURSOR_MAX_CHARS,
        help_text=CURSOR_HELP,
    )
