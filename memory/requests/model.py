"""The base of every request model: strict, closed, read into the client's error."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from memory.requests.refusals import refusal


class StrictModel(BaseModel):
    """A request: every field typed strictly (`memory.requests.strict`), unknown fields
    refused, nothing trimmed, and immutable once read."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)

    @classmethod
    def read(cls, data: Any, **context: Any) -> Self:
        """`data` validated; the refusal as the client's error (`refusals.refusal`):
        InvalidRequest naming each failing field, or 413 `too_large`. `context` reaches
        the validators (`replaying`, for history being rebuilt)."""
        try:
            return cls.model_validate(data, context=context)
        except ValidationError as exc:
            raise refusal(exc) from None
