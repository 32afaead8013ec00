"""One result per operation of a committed transaction, in its receipt's `results` (R11):
what each operation did to the frames, relations and observations it names."""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict


class FrameWritten(TypedDict):
    """A frame derived or revised: its revision, status and token estimate after it."""

    op: Literal["derive", "revise"]
    id: str
    revision: int
    status: str
    tokens: int
    retirement_cancelled: NotRequired[bool]  # a revise of a retiring frame: it stays


class RelationChanged(TypedDict):
    op: Literal["relate", "unrelate"]
    subject: str
    name: str
    object: str


class RetiredRef(TypedDict):
    """One ref of a retire: its status after it and whether the retire changed it."""

    ref: str
    status: str
    due_tick: NotRequired[int | None]  # a frame retiring (R14)
    changed: bool
    released_tokens: NotRequired[int]  # an observation retired now


class Retired(TypedDict):
    op: Literal["retire"]
    refs: list[RetiredRef]


class RestoredRef(TypedDict):
    ref: str
    status: str
    changed: bool


class Restored(TypedDict):
    op: Literal["restore"]
    ids: list[RestoredRef]


class ProtectedRef(TypedDict):
    ref: str
    protected: bool
    changed: bool
    retirement_cancelled: NotRequired[bool]  # protecting a retiring frame: it stays


class Protected(TypedDict):
    op: Literal["protect", "unprotect"]
    ids: list[ProtectedRef]


OpResult: TypeAlias = FrameWritten | RelationChanged | Retired | Restored | Protected
