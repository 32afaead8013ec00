"""The frame shape: a frame as the API, the explorer and the model's reads show it, with
its retirement window while it retires."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from memory.kinds import FRAME_STATUSES, RETIRING
from memory.models import Frame
from memory.shapes.fields import Choices, Doc
from memory.tx.retirement import ticks_left


class WindowView(TypedDict):
    """A retiring frame's window, as models, people and API clients see it (`retire`)."""

    requested_tick: int | None
    due_tick: int
    ticks_left: int
    reason: str


def window_view(
    status: str, requested_tick: int | None, due_tick: int | None, reason: str | None, tick: int
) -> WindowView | None:
    """How a retiring frame's window is shown to models, people and API clients:
    `{requested_tick, due_tick, ticks_left, reason}`, or None unless the frame is retiring."""
    if status != RETIRING or due_tick is None:
        return None
    return {
        "requested_tick": requested_tick,
        "due_tick": due_tick,
        "ticks_left": ticks_left(due_tick, tick),
        "reason": reason or "",
    }


class FrameJson(TypedDict):
    """A frame as the API and the explorer show it (docs/rest.md); built by `frame_json`."""

    id: str
    revision: int
    status: Annotated[str, Choices.of(FRAME_STATUSES)]
    protected: bool
    body: Annotated[Any, Doc("ordered map written by the model")]
    sources: list[str]
    retire: Annotated[WindowView | None, Doc("set while retiring")]
    tokens: int
    created_version: int
    changed_version: int


def frame_json(frame: Frame, tick: int) -> FrameJson:
    """The one builder of a frame's JSON shape at `tick` (the retirement window's ticks)."""
    return {
        "id": frame.frame_id,
        "revision": frame.revision,
        "status": frame.status,
        "protected": frame.protected,
        "body": frame.body,
        "sources": list(frame.sources),
        "retire": window_view(
            frame.status,
            frame.retire_requested_tick,
            frame.retire_due_tick,
            frame.retire_reason,
            tick,
        ),
        "tokens": frame.token_estimate,
        "created_version": frame.created_version,
        "changed_version": frame.changed_version,
    }
