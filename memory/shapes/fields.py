"""Marks on a shape's fields that the OpenAPI schema reads (api/shapes.py derives its
components from the TypedDicts): a field's description, a closed set of values, a time.

Written as `Annotated[int, Doc("...")]`, so type checkers see the plain type."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated


@dataclass(frozen=True)
class Doc:
    """What a field means, for the schema's description."""

    text: str


@dataclass(frozen=True)
class Choices:
    """The closed set of values a `str` field takes (an enum in the schema)."""

    values: tuple[str, ...]

    @classmethod
    def of(cls, values: Iterable[str]) -> Choices:
        """The set from any iterable of values, in its order."""
        return cls(tuple(values))


@dataclass(frozen=True)
class Opaque:
    """Documented as free JSON: a user's payload, or a shape named in its description."""


OPAQUE = Opaque()

# An ISO 8601 time as `datetime.isoformat()` writes it.
Timestamp = Annotated[str, "date-time"]
DATE_TIME = "date-time"
