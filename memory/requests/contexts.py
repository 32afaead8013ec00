"""Requests about a whole context: settings, forks, diffs, erasure and the read floor
(R52-R55, R64, R68)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from memory.idempotency import Key
from memory.kinds import SCREENING_MODES
from memory.limits import MAX_ERASURE_ITEMS, MAX_ERASURE_PATTERN_CHARS, MAX_ERASURE_REASON_CHARS
from memory.requests import common
from memory.requests.common import QInt
from memory.requests.model import StrictModel
from memory.requests.strict import Choice, Name, NotNull, Slug
from memory.vocabulary import MAX_SEQ


class ContextPatchIn(StrictModel):
    frozen: Annotated[bool | None, NotNull] = Field(
        None,
        description="true: every write is refused with 409 `context_frozen`; false: unfreeze "
        "(a frozen context is unfrozen by an admin-scope token only)",
    )
    screening: Annotated[Annotated[str, Choice(SCREENING_MODES)] | None, NotNull] = Field(
        None,
        description="screening of written text for secrets and card numbers: off, refuse or "
        "mask (admin-scope tokens only)",
    )


class ForkIn(StrictModel):
    slug: Slug | None = Field(None, description="default: `<source>-fork-<hex>`")
    at_version: int | None = Field(
        None,
        ge=0,
        le=MAX_SEQ,
        description="the point to fork at (end of that version); default: now",
    )
    name: Name | None = Field(
        None, max_length=200, description="default: `<source name> (fork at vN)`"
    )
    idempotency_key: Key | None = common.key()


class DiffQuery(StrictModel):
    from_version: QInt = Field(alias="from", ge=0, le=MAX_SEQ, description="the earlier version")
    to: QInt | None = Field(None, ge=0, le=MAX_SEQ, description="the later version (default: now)")


class ReadFloorQuery(StrictModel):
    """The read-your-writes floor alone, read before the endpoint's own parameters (a query
    string's or the Morphz-Min-Version header's text)."""

    min_version: QInt | None = common.min_version()


class ReadFloorBody(StrictModel):
    """The read-your-writes floor of a JSON body (a POST that reads)."""

    min_version: Annotated[int | None, NotNull] = common.min_version()


class SpanIn(StrictModel):
    ref: Name = Field(max_length=40, description="the event, like @e12")
    start: int = Field(ge=0, le=MAX_SEQ, description="first character")
    end: int = Field(ge=1, le=MAX_SEQ, description="character after the span")


class ErasureIn(StrictModel):
    refs: list[Annotated[Name, Field(max_length=200)]] = Field(
        default_factory=list,
        max_length=MAX_ERASURE_ITEMS,
        description='whole events and frames: ["@e12", "card-number", ...]',
    )
    spans: list[SpanIn] = Field(
        default_factory=list, max_length=MAX_ERASURE_ITEMS, description="parts of events' text"
    )
    patterns: list[Annotated[Name, Field(max_length=MAX_ERASURE_PATTERN_CHARS)]] = Field(
        default_factory=list,
        max_length=MAX_ERASURE_ITEMS,
        description="texts erased wherever they occur (card numbers however they are spaced)",
    )
    reason: Name = Field(max_length=MAX_ERASURE_REASON_CHARS, description="why")
