"""The tombstone of erased content (R64): what was erased, when, by whom and why, never
the erased text; the answer of an erasure request; and a tombstone as an export line."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypedDict

from memory.shapes.fields import Choices, Doc, Timestamp


class TombstoneJson(TypedDict):
    id: int
    request: str
    target: Annotated[str, Choices(("event", "frame", "span", "pattern"))]
    ref: str | None
    label: str | None
    matches: int
    reason: str
    erased_by: str
    erased_at: Timestamp
    origin: Annotated[str | None, Doc("context of the lineage asked on")]
    span: NotRequired[list[int]]


class ErasureJson(TypedDict):
    request: str
    erasures: list[TombstoneJson]
    contexts: Annotated[dict[str, int], Doc("places masked per context of the lineage")]


class ErasureList(TypedDict):
    erasures: list[TombstoneJson]


class ErasureLine(TypedDict):
    """A tombstone in an export file, its columns as stored (memory.erasure.lines)."""

    type: Literal["erasure"]
    request: str
    target: str
    ref: str
    span_start: int | None
    span_end: int | None
    label: str
    matches: int
    reason: str
    erased_by: str
    origin: str
    erased_at: Timestamp
