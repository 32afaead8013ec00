"""Points in a context's history, and the SQL that reads the state at one (R52).

How it works: docs/internals.md, section `memory/versions/points.py`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from memory.errors import ErrorCode, InvalidField, InvalidRequest
from memory.models import Context
from memory.sql import named_row, statements


@dataclass(frozen=True)
class Point:
    """The end of version `version` of one context."""

    context_id: int
    version: int
    tick: int
    last_seq: int  # the last event seq that exists at this point
    record_cutoff: int | None  # records with id < this existed (None: all of them)
    present: bool

    def params(self) -> dict[str, Any]:
        """The point as SQL parameters: ctx, v (version), tick, seq (last event), rec."""
        return {
            "ctx": self.context_id,
            "v": self.version,
            "tick": self.tick,
            "seq": self.last_seq,
            "rec": self.record_cutoff if self.record_cutoff is not None else 2**62,
        }


def parse_version(value: Any, field: str = "as_of") -> int:
    """A version number from a query parameter or a body field."""
    if isinstance(value, bool):
        raise InvalidRequest(f"{field} must be a version number", code=ErrorCode.INVALID_VERSION)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidField(field, f"{field} must be a version number; got {value!r}") from None
    return number


def resolve_point(context: Context, version: Any, field: str = "as_of") -> Point:
    """The point at the end of `version`; InvalidRequest (`invalid_version`) when the context
    never had that version. Reads the context row as given (the caller decides locking)."""
    number = parse_version(version, field)
    if not 0 <= number <= context.version:
        raise InvalidField(
            field,
            f"{field} must be a version from 0 to {context.version} (the present); got {number}",
            min=0,
            max=context.version,
        )
    if number == context.version:
        return Point(context.pk, number, context.tick, context.last_seq, None, True)
    with connection.cursor() as cur:
        cur.execute(
            statements("memory.versions")["point_of_version"], {"ctx": context.pk, "v": number}
        )
        row = named_row(cur)
    if row is None:  # a commit without its event cannot happen; say so instead of guessing
        raise InvalidRequest(
            f"the history of version {number + 1} is missing", code=ErrorCode.INVALID_VERSION
        )
    tick, last_seq = int(row["tick"]), int(row["next_seq"]) - 1
    return Point(context.pk, number, tick, last_seq, int(row["record_id"]), False)


def as_of_sql(name: str) -> str:
    """The as-of statement `name` of memory/versions/queries.sql: for the point in
    `Point.params()`, rows shaped like the stored table."""
    return statements("memory.versions")[name]
