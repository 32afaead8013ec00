"""The answer of cancelling a pending action (R59)."""

from __future__ import annotations

from typing import Annotated, TypedDict

from memory.shapes.fields import Doc


class Cancellation(TypedDict):
    ref: Annotated[str, Doc("the cancellation: a tool_result delivering the action")]
    cancels: Annotated[str, Doc("the action's ref")]


def cancellation_json(ref: str, cancels: str) -> Cancellation:
    """The cancelling `tool_result`'s ref and the ref of the action it `cancels`."""
    return {"ref": ref, "cancels": cancels}
