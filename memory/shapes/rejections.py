"""The details of a refused transaction, in its error's `details`: each failing operation
of a rule violation (R11), each changed item of a conflict (R20)."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class FailedOperation(TypedDict):
    index: int  # the operation's place in the transaction, from 0
    op: str
    code: str
    message: str
    ref: NotRequired[str]  # the frame id or event ref at fault


class ChangedItem(TypedDict):
    ref: str  # a frame id, an event ref, or a relation as `subject name object`
    kind: str  # frame | event | relation
    changed_version: int
    revision: NotRequired[int]  # a frame's
    status: NotRequired[str]
